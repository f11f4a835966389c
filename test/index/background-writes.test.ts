import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {Uint32Reader} from '../../src/util/file-array.js'
import {testTemp} from '../helpers/test-temp.js'
import {BackgroundWrites} from '../../src/index/background-writes.js'

// The writer thread runs from the compiled worker file (worker-job.ts: npm test builds it first).

describe('the index writer thread', () => {
  it('raises an array written flag once it is in the file; a reader waiting for it then reads it', () => {
    const writes = BackgroundWrites.start()
    const path = `${testTemp('writes-')}/index`
    const fd = fs.openSync(path, 'w')
    const values = new Uint32Array(new SharedArrayBuffer(4 * 10_000))
    for (let i = 0; i < values.length; i++) values[i] = (i * 2654435761) >>> 0
    const written = new Int32Array(new SharedArrayBuffer(4))
    writes.write(fd, values, 16, written)
    writes.awaitWritten(written)
    expect(Atomics.load(written, 0)).toBe(1)
    writes.drain()
    const reader = new Uint32Reader({path, byteOffset: 16, length: values.length, written}, 3000)
    const got: number[] = []
    for (let i = 0; i < values.length; i++) {
      if (i >= reader.end) reader.load(i, values.length)
      got.push(reader.words[i - reader.start]!)
    }
    reader.close()
    expect(got).toEqual(Array.from(values))
    fs.closeSync(fd)
    writes.close()
  })

  it('a failed write (a full disk): its flag says so, a reader refuses it, the failure is told once and again', () => {
    const writes = BackgroundWrites.start()
    // /dev/full fails every write with ENOSPC, as a full disk does.
    const fd = fs.openSync('/dev/full', 'w')
    const written = new Int32Array(new SharedArrayBuffer(4))
    writes.write(fd, new Uint32Array(new SharedArrayBuffer(4096)), 0, written)
    writes.awaitWritten(written)
    expect(Atomics.load(written, 0)).toBe(2)
    const reader = new Uint32Reader({path: '/dev/full', byteOffset: 0, length: 1024, written}, 256)
    expect(() => reader.load(0, 1024)).toThrow(/could not be written/)
    expect(writes.failure()).toMatch(/ENOSPC/)
    expect(() => writes.drain()).toThrow(/ENOSPC/)
    // Read from the thread once, kept: the analysis asks again after drain has.
    expect(writes.failure()).toMatch(/ENOSPC/)
    fs.closeSync(fd)
    writes.close()
  })
})
