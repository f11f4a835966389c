/**
 * Worker thread body of first-words.ts: opens the core itself, reads the first words of the range
 * of spans it was given, then of ranges taken from the shared counter until none is left.
 */
import {workerBody} from '../util/worker-body.js'
import type {FirstWordsWorkerData, FirstWordsWorkerMessage} from './first-words.js'

await workerBody<FirstWordsWorkerData>(async ({data, port}) => {
  const {openMemory} = await import('../core/memory-source.js')
  const {scanBuffer} = await import('./object-scan.js')
  const {readFirstWords} = await import('./first-words.js')
  const {memory, close} = openMemory(data.source)
  try {
    const buf = scanBuffer()
    for (let r = data.first; r < data.bounds.length - 1; r = Atomics.add(data.counters, 0, 1)) {
      readFirstWords(memory, data.tables, data.bounds[r]!, data.bounds[r + 1]!, data.words, buf)
      port.postMessage({range: r} satisfies FirstWordsWorkerMessage)
    }
  } finally {
    close()
  }
})
