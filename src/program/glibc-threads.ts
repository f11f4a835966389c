import path from 'node:path'
import {PT_TLS} from '../elf/constants.js'
import type {LoadedModule, Program} from './program.js'
import {pthreadAddress} from './thread-pointer.js'
import {threadDb} from './thread-db.js'
import {MAX_LISTED_THREADS, rtldThreadLists, walkPthreadList} from './rtld-thread-lists.js'
import {u64le} from '../util/u64le.js'

/** What glibc's thread bookkeeping says about the process (glibc-nptl.md), as far as it can be read. */
export interface GlibcThreads {
  /** sizeof(struct pthread): the TCB at fs_base is followed by nothing else of the thread. Null when unknown. */
  pthreadSize: number | null
  /** Bytes of static TLS below fs_base: the modules' PT_TLS blocks, laid out as glibc does (TLS_TCB_AT_TP). */
  staticTlsSize: number
  /** TCB (struct pthread) addresses of exited threads whose stacks glibc keeps for reuse; null when that list cannot be found. */
  cachedStacks: number[] | null
  /** TCBs of threads that exited but were not joined yet (on _dl_stack_used, no live thread's fs_base). */
  unjoinedStacks: number[]
  /** How the cached stacks were found, or why not. */
  how: string
}

/**
 * Reads the libthread_db descriptors glibc exports (`_thread_db_*`, GLIBC_PRIVATE, in libc.so.6
 * since 2.34) from the libc file, and follows `_rtld_global._dl_stack_cache` in ld.so's data:
 * the list of stacks of exited threads, linked through each `struct pthread`'s `list` field.
 * `_dl_stack_cache` is the list_t right after `_dl_stack_user` (ldsodefs.h). Older glibc keeps the
 * cache in a static of libpthread that nothing names: those stacks stay unlabelled.
 */
export function glibcThreads(program: Program): GlibcThreads {
  const memory = program.core.memory
  const db = threadDb(program)
  const sizeof = db?.sizeOf('pthread') ?? null
  const pthreadSize = sizeof && sizeof > 0 && sizeof < 1 << 16 ? sizeof : null
  const staticTlsSize = staticTls(program.modules)
  const result = (cachedStacks: number[] | null, how: string): GlibcThreads => ({pthreadSize, staticTlsSize, cachedStacks, unjoinedStacks: [], how})

  const lists = rtldThreadLists(program)
  if (lists.why !== null) return result(null, lists.why)
  const cache = walkPthreadList(memory, lists.stackCache, lists.listOffset)
  // Threads that exited but were not joined yet keep their stacks on _dl_stack_used.
  const live = new Set(program.core.threads.map(t => pthreadAddress(program, t)))
  const inUse = lists.stackUsed !== null ? walkPthreadList(memory, lists.stackUsed, lists.listOffset) : {tcbs: [], broken: null}
  const unjoined = inUse.tcbs.filter(t => !live.has(t))
  const stacks = (n: number) => `${n} stack${n === 1 ? '' : 's'}`
  const how = `_rtld_global._dl_stack_cache (${stacks(cache.tcbs.length)})${lists.stackUsed !== null ? `, _dl_stack_used (${stacks(unjoined.length)} of exited threads not joined yet)` : ''}${cache.broken ? `; ${cache.broken}` : ''}`
  return {...result(cache.tcbs, how), unjoinedStacks: unjoined}
}

/**
 * TCBs of threads that are gone, found without glibc's lists: a 64-aligned `struct pthread` whose
 * header.tcb (+0) and header.self (+16) both point to itself, that is no live thread's fs_base.
 * Searched in the given ranges (anonymous memory outside the heap), in chunks.
 */
export function findExitedTcbs(program: Program, ranges: ReadonlyArray<{start: number; end: number}>): number[] {
  const memory = program.core.memory
  const live = new Set(program.core.threads.map(t => pthreadAddress(program, t)))
  const found: number[] = []
  const CHUNK = 4 * 1024 * 1024
  const buf = Buffer.allocUnsafe(CHUNK + 24)
  for (const r of ranges) {
    const start = Math.ceil(r.start / 64) * 64
    for (let pos = start; pos + 24 <= r.end && found.length < MAX_LISTED_THREADS; pos += CHUNK) {
      const n = Math.min(CHUNK + 24, r.end - pos)
      if (!memory.readInto(pos, n, buf)) continue
      for (let off = 0; off < CHUNK && off + 24 <= n; off += 64) {
        const lo = buf.readUInt32LE(off)
        if (lo !== (pos + off) % 0x1_0000_0000) continue
        const x = pos + off
        const self = u64le(buf, off + 16)
        if (self === x && u64le(buf, off) === x && !live.has(x)) found.push(x)
      }
    }
  }
  return found
}

/** glibc's offsets for initial-exec TLS on x86-64: each module's block below the previous, aligned. */
function staticTls(modules: LoadedModule[]): number {
  let offset = 0
  for (const m of modules) {
    const tls = m.file?.segments.find(s => s.type === PT_TLS)
    if (!tls || tls.memsz <= 0) continue
    const align = Math.max(1, tls.align)
    offset = Math.ceil((offset + tls.memsz) / align) * align
  }
  return offset
}
