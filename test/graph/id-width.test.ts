import {expect, it} from 'vitest'
import {checkIdWidth, MAX_IDS} from '../../src/graph/csr.js'
import {TomaError} from '../../src/errors.js'

it('counts beyond the 32-bit ids stop with a clear error instead of wrapping', () => {
  expect(() => checkIdWidth(MAX_IDS, 'edges')).not.toThrow()
  expect(() => checkIdWidth(MAX_IDS + 1, 'edges')).toThrow(TomaError)
  expect(() => checkIdWidth(2 ** 33, 'objects')).toThrow(/more than 4294967295 objects \(8589934592\): beyond toma's 32-bit objects ids/)
  // The wrap this prevents: a Uint32Array slot silently keeps the count modulo 2^32.
  expect(Uint32Array.of(2 ** 33 + 5)[0]).toBe(5)
})
