import type {HeapModel, ModelOptions} from '../../src/heap/heap-model.js'
import type {Program} from '../../src/program/program.js'
import {analyzeHeap, type TcmallocHeap} from '../../src/tcmalloc/heap.js'
import {asHeapModel} from '../../src/tcmalloc/model.js'

/** TCMalloc's heap as the model reads it (globals, layout) and as the layers above see it, in one object: for tests that check both. */
export type TcmallocHeapModel = TcmallocHeap & HeapModel

export function analyzeTcmalloc(program: Program, options: ModelOptions = {}): TcmallocHeapModel {
  return withModel(analyzeHeap(program, options))
}

/** A TCMalloc heap (maybe altered by a test, maybe with an older model's functions) with the neutral model over it. */
export function withModel(heap: TcmallocHeap): TcmallocHeapModel {
  return Object.assign({}, heap, asHeapModel(heap), {spans: heap.spans, threadCaches: heap.threadCaches})
}
