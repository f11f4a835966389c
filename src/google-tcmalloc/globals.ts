import type {LoadedModule, Program} from '../program/program.js'

/**
 * google/tcmalloc's globals are static members of tcmalloc::tcmalloc_internal::Static (and
 * ThreadCache), named by these mangled symbols in every snapshot from 2023 on. A program links
 * tcmalloc statically (MongoDB, Envoy, YDB), so they are in the executable's .symtab.
 */
export const SYMBOL = {
  pageMap: '_ZN8tcmalloc17tcmalloc_internal6Static8pagemap_E',
  sizeMap: '_ZN8tcmalloc17tcmalloc_internal6Static8sizemap_E',
  transferCache: '_ZN8tcmalloc17tcmalloc_internal6Static15transfer_cache_E',
  cpuCache: '_ZN8tcmalloc17tcmalloc_internal6Static10cpu_cache_E',
  cpuCacheActive: '_ZN8tcmalloc17tcmalloc_internal6Static17cpu_cache_active_E',
  threadHeaps: '_ZN8tcmalloc17tcmalloc_internal11ThreadCache13thread_heaps_E',
  spanAllocator: '_ZN8tcmalloc17tcmalloc_internal6Static15span_allocator_E',
  invalidSpan: '_ZN8tcmalloc17tcmalloc_internal6Static12kInvalidSpanE',
} as const

export type GlobalName = keyof typeof SYMBOL

export interface GoogleGlobals {
  module: LoadedModule
  /** Each global's address, or null where its symbol is absent. */
  at: Record<GlobalName, number | null>
}

/** The module defining Static::pagemap_: google/tcmalloc is there (a gperftools build has no such symbol). */
export function findGoogleModule(program: Program): LoadedModule | undefined {
  return program.modules.find(m => m.file?.symbolByName(SYMBOL.pageMap) !== undefined)
}

export function locateGlobals(program: Program, module: LoadedModule): GoogleGlobals {
  const at = {} as Record<GlobalName, number | null>
  for (const [name, symbol] of Object.entries(SYMBOL) as Array<[GlobalName, string]>) {
    at[name] = program.symbolAddress(symbol, [module])?.address ?? null
  }
  return {module, at}
}
