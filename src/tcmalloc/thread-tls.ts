import type {Thread} from '../core/thread-registers.js'
import type {AllocatorModule} from '../heap/heap-model.js'
import type {Program} from '../program/program.js'

/**
 * TCMalloc's per-thread pointer to the thread's cache, by version group: the TLS variable and the
 * offset of the ThreadCache* inside it (reference §7).
 */
const TLS_POINTERS: Array<{symbol: string; groups: string; offset: number}> = [
  {symbol: '_ZN8tcmalloc14ThreadCachePtr9tls_data_E', groups: 'J', offset: 0}, // fast_path_cache
  {symbol: '_ZN8tcmalloc11ThreadCache17threadlocal_data_E', groups: 'EFGHI', offset: 8}, // heap
  {symbol: '_ZN8tcmalloc11ThreadCache17threadlocal_data_E', groups: 'BCD', offset: 0}, // heap
  {symbol: '_ZN8tcmalloc11ThreadCache17threadlocal_heap_E', groups: 'A', offset: 0},
]

/**
 * Which thread's TLS points at which ThreadCache: each thread's variable lies at fs_base + TPOFF,
 * where TPOFF is what the loader wrote into the GOT slot of the variable's R_X86_64_TPOFF64
 * relocation (a dirty page, so it is in the core). This names the owner where the cache itself
 * records none (2.15.90+ dropped ThreadCache::tid_). Needs the library file for the relocation.
 */
export function threadCachesByTls(program: Program, module: AllocatorModule, group: string, threads: Thread[]): Map<number, number> {
  const owners = new Map<number, number>()
  const file = module.loaded.file
  if (!file) return owners
  const memory = program.core.memory
  for (const tls of TLS_POINTERS) {
    if (!tls.groups.includes(group)) continue
    const slot = file.tpoffGotSlot(tls.symbol)
    if (slot === undefined) continue
    const raw = memory.readU64Big(slot + module.loaded.module.loadBias)
    if (raw === undefined) continue
    const tpoff = Number(BigInt.asIntN(64, raw))
    for (const t of threads) {
      if (t.threadPointer === null) continue
      const cache = memory.readU64(t.threadPointer + tpoff + tls.offset)
      if (cache) owners.set(cache, t.tid)
    }
    break
  }
  return owners
}
