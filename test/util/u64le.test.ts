import {expect, it} from 'vitest'
import {u64le} from '../../src/util/u64le.js'

it('reads a 64-bit little-endian word as the number Number(readBigUInt64LE) gives, above 2^53 too', () => {
  const buf = Buffer.alloc(16)
  const words = [0n, 1n, 0xffff_ffffn, 0x1_0000_0000n, 2n ** 53n - 1n, 2n ** 53n + 1n, 0x636172542d580a0dn, 2n ** 64n - 1n]
  let x = 0x12345678n
  for (let i = 0; i < 200; i++) words.push((x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n))
  for (const w of words) {
    buf.writeBigUInt64LE(w, 3)
    expect(u64le(buf, 3)).toBe(Number(buf.readBigUInt64LE(3)))
  }
  expect(() => u64le(buf, 9)).toThrow(RangeError)
})
