import type {HeapModel, ModelOptions} from './heap/heap-model.js'
import type {Program} from './program/program.js'
import {googleTcmallocModel} from './google-tcmalloc/model.js'
import {tcmallocModel} from './tcmalloc/model.js'

/** An allocator model: whether the process may run its allocator, and the heap it reads from the core. */
export interface AllocatorModel {
  name: string
  present(program: Program): boolean
  analyze(program: Program, options?: ModelOptions): HeapModel
}

/**
 * The allocator models toma knows, tried in order. The only file above src/heap that names one:
 * the analysis asks `modelHeap` and sees the neutral model (heap/heap-model.ts).
 */
export const ALLOCATOR_MODELS: readonly AllocatorModel[] = [googleTcmallocModel, tcmallocModel]

/**
 * The heap of the first model whose allocator the process may run. When none is found the first
 * model that guesses (gperftools', which searches an executable for its structures) analyses all
 * the same: its error says what was looked for and not found.
 */
export function modelHeap(program: Program, options: ModelOptions = {}): HeapModel {
  const model = ALLOCATOR_MODELS.find(m => m.present(program)) ?? tcmallocModel
  return model.analyze(program, options)
}
