import fs from 'node:fs'
import {Worker} from 'node:worker_threads'
import {describe, expect, it} from 'vitest'
import {readFileArray, Uint32Reader, type FileArray} from '../../src/util/file-array.js'
import {testTemp} from '../helpers/test-temp.js'

// The dominator pass reads the reverse graph's sources back from the index being written, by
// another thread perhaps still at it (dominators.ts: PredecessorCopy).
describe('Uint32Reader over a file', () => {
  const values = Uint32Array.from({length: 1000}, (_, i) => (i * 2654435761) >>> 0)

  it('waits for the writing thread, then reads any range in chunks of its size', async () => {
    const path = `${testTemp('file-array-')}/array`
    const written = new Int32Array(new SharedArrayBuffer(4))
    // Another thread writes the array behind 16 bytes of something else, 200 ms from now.
    const worker = new Worker(
      `const fs = require('node:fs')
       const {workerData: {path, bytes, written}} = require('node:worker_threads')
       setTimeout(() => {
         fs.writeFileSync(path, Buffer.concat([Buffer.alloc(16, 0xee), Buffer.from(bytes)]))
         Atomics.store(written, 0, 1); Atomics.notify(written, 0)
       }, 200)`,
      {eval: true, workerData: {path, bytes: new Uint8Array(values.buffer), written}},
    )
    const array: FileArray = {path, byteOffset: 16, length: values.length, written}
    const reader = new Uint32Reader(array, 7)
    const got: number[] = []
    for (let i = 3; i < 990; i++) {
      if (i >= reader.end) reader.load(i, 990)
      got.push(reader.words[i - reader.start]!)
    }
    reader.close()
    expect(got).toEqual(Array.from(values.subarray(3, 990)))
    // Reads stop at the end asked for, not at the chunk's.
    const tail = new Uint32Reader(array, 100)
    tail.load(950, 960)
    expect(tail.end).toBe(960)
    expect(Array.from(tail.words.subarray(0, 10))).toEqual(Array.from(values.subarray(950, 960)))
    tail.close()
    await worker.terminate()
  })

  it('says so when the file ends before the array does', () => {
    const path = `${testTemp('file-array-')}/cut`
    fs.writeFileSync(path, Buffer.from(values.buffer, 0, 400))
    const reader = new Uint32Reader({path, byteOffset: 0, length: values.length, written: Int32Array.of(1)}, 64)
    reader.load(0, 1000)
    expect(reader.words[63]).toBe(values[63])
    expect(() => reader.load(64, 1000)).toThrow(/ends before its array/)
    reader.close()
  })

  // The analysis reads outStart back whole from the index (analyze-core.ts: outStartBack).
  it('reads a whole array into memory it is given, longer than the array', () => {
    const path = `${testTemp('file-array-')}/whole`
    fs.writeFileSync(path, Buffer.concat([Buffer.alloc(8, 0xee), Buffer.from(values.buffer), Buffer.alloc(8, 0xee)]))
    const into = new Uint32Array(new SharedArrayBuffer(4 * (values.length + 5))).fill(7)
    const got = readFileArray({path, byteOffset: 8, length: values.length, written: Int32Array.of(1)}, into)
    expect(got.buffer).toBe(into.buffer)
    expect(Array.from(got)).toEqual(Array.from(values))
    expect(into[values.length]).toBe(7)
    expect(() => readFileArray({path, byteOffset: 8, length: values.length, written: Int32Array.of(2)}, into)).toThrow(/could not be written/)
  })

  it('over memory: the array itself, nothing to load', () => {
    const reader = new Uint32Reader(values)
    expect(reader.words).toBe(values)
    expect(reader.end).toBe(values.length)
  })
})
