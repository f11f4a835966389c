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
  pageAllocator: '_ZN8tcmalloc17tcmalloc_internal6Static15page_allocator_E',
  shardedTransferCache: '_ZN8tcmalloc17tcmalloc_internal6Static23sharded_transfer_cache_E',
} as const

export type GlobalName = keyof typeof SYMBOL

export interface GoogleGlobals {
  module: LoadedModule
  /** Each global's address, or null where it was not found. */
  at: Record<GlobalName, number | null>
  /** How each was found: 'symbol', 'signature' (signatures.ts), or why not. */
  how: Record<GlobalName, string>
}

/** The module defining Static::pagemap_ (a gperftools build has no such symbol). */
export function moduleWithSymbols(program: Program): LoadedModule | undefined {
  return program.modules.find(m => m.file?.symbolByName(SYMBOL.pageMap) !== undefined)
}

/** Each global by its symbol in the module (none when signaturesOnly: a test of the signatures). */
export function globalsBySymbol(program: Program, module: LoadedModule, signaturesOnly: boolean): GoogleGlobals {
  const at = {} as Record<GlobalName, number | null>
  const how = {} as Record<GlobalName, string>
  for (const [name, symbol] of Object.entries(SYMBOL) as Array<[GlobalName, string]>) {
    at[name] = signaturesOnly ? null : (program.symbolAddress(symbol, [module])?.address ?? null)
    how[name] = at[name] === null ? 'not found' : 'symbol'
  }
  return {module, at, how}
}
