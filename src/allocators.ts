import type {HeapModel, ModelOptions} from './heap/heap-model.js'
import type {Program} from './program/program.js'
import {TomaError} from './errors.js'
import {googleTcmallocModel} from './google-tcmalloc/model.js'
import {glibcMainArenaHeap} from './glibc-malloc/main-arena-heap.js'
import type {OtherAllocatorHeap, OtherAllocatorInputs} from './heap/other-allocator.js'
import {tcmallocModel} from './tcmalloc/model.js'

/** An allocator model: whether the process may run its allocator, and the heap it reads from the core. */
export interface AllocatorModel {
  name: string
  /**
   * How the process shows the allocator: 'symbols' (its library by name or a module with its
   * symbols), 'structure' (only its structures, found in the executable's data by signature), or
   * null. Symbols outrank structures: a program with one allocator's symbols is never taken for the
   * other because some data looked like it.
   */
  present(program: Program): 'symbols' | 'structure' | null
  /** One line naming the allocator and its build as far as telling it is cheap (`toma info`); throws a TomaError when its structures are not what it knows. */
  identify(program: Program): string
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
  const model = chooseModel(program) ?? tcmallocModel
  return model.analyze(program, options)
}

/** Which allocator the process ran, in one line, or why it cannot be told. */
export function identifyAllocator(program: Program): string {
  const model = chooseModel(program)
  if (!model) return 'no allocator toma reads (no libtcmalloc, no module with either TCMalloc\'s symbols, no google/tcmalloc page map in the executable)'
  try {
    return model.identify(program)
  } catch (e) {
    if (e instanceof TomaError) return `${model.name}: ${e.message}`
    throw e
  }
}

/** The first model the process shows by its symbols, else the first it shows by its structures. */
function chooseModel(program: Program): AllocatorModel | undefined {
  const bySymbols = ALLOCATOR_MODELS.find(m => m.present(program) === 'symbols')
  return bySymbols ?? ALLOCATOR_MODELS.find(m => m.present(program) === 'structure')
}

/**
 * Memory of the other allocators toma recognises in the process beside the one the heap model
 * reads (glibc malloc's main arena, when something bypassed TCMalloc): each found, proven or with
 * notes saying what was not.
 */
export function otherAllocatorHeaps(program: Program, inputs: OtherAllocatorInputs): OtherAllocatorHeap[] {
  const glibc = glibcMainArenaHeap(program, inputs)
  return glibc ? [glibc] : []
}
