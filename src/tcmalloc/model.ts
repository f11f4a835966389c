import path from 'node:path'
import type {HeapModel, ModelOptions} from '../heap/heap-model.js'
import type {Program} from '../program/program.js'
import {findAllocatorModule} from './allocator-module.js'
import {analyzeHeap, type TcmallocHeap} from './heap.js'
import {allocatorActivity} from './inside-allocator.js'
import {allocatorMetadata, allocatorStatics} from './metadata.js'
import {describeAllocator, sizeClassUse, spanKinds, spansOfClass, touchedFigures} from './report-facts.js'

/** Classes of TCMalloc itself (gperftools' malloc_extension.cc, tcmalloc.cc, debugallocation.cc). */
const ALLOCATOR_CLASS = /^(MallocExtension|TCMallocImplementation|DebugMallocImplementation|tcmalloc::.*)$/

/**
 * gperftools TCMalloc as a heap model: the one entry point through which the layers above see it
 * (src/allocators.ts lists it). `present` says whether the process may run it; `analyze` reads its
 * structures (heap.ts) and hands the neutral model (heap/heap-model.ts) over them.
 */
export const tcmallocModel = {
  name: 'TCMalloc',
  /** A libtcmalloc library, a module with its symbols, or an executable to search for its structures. */
  present(program: Program): 'symbols' | 'structure' | null {
    const module = findAllocatorModule(program)
    return module === undefined ? null : module.guessed ? 'structure' : 'symbols'
  },
  identify(program: Program): string {
    const module = findAllocatorModule(program)
    return module?.guessed === false ? `gperftools TCMalloc in ${path.basename(module.loaded.module.path)} (\`analyze\` tells its release)` : 'gperftools TCMalloc, if the executable holds its structures'
  },
  analyze(program: Program, options: ModelOptions = {}): HeapModel {
    return asHeapModel(analyzeHeap(program, options))
  },
}

/** The neutral model over TCMalloc's heap: its arrays as they are, its interpretation as functions. */
export function asHeapModel(heap: TcmallocHeap): HeapModel {
  const {globals, ...modelled} = heap
  return {
    ...modelled,
    name: tcmallocModel.name,
    sizeClassSizes: globals.sizes.size,
    internalClasses: ALLOCATOR_CLASS,
    // gperftools keeps no object of its own that only its structures name (its sampled objects have no proxy).
    ownSlots: new Uint32Array(0),
    ownLibrary: /^libtcmalloc/.test(path.basename(heap.module.loaded.module.path)),
    // Class 0 (size 0) first: the sentinel below the smallest class.
    requestFit: () => ({classSizes: globals.sizes.size.slice(0, globals.sizes.count), pageSize: heap.pageSize}),
    metadata: (program, warnings) => allocatorMetadata(program, heap, warnings),
    staticState: () => allocatorStatics(heap),
    activity: program => allocatorActivity(program, heap),
    touchedFigures: (activity, bytesBehind) => touchedFigures(heap, activity, bytesBehind),
    spansOfClass: sizeClass => spansOfClass(heap, sizeClass),
    describe: () => describeAllocator(heap),
    spanKinds: () => spanKinds(heap),
    sizeClassUse: () => sizeClassUse(heap),
  }
}
