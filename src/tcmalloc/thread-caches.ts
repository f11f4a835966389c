import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {Layout} from './layout.js'
import type {DamageLog} from '../heap/damage.js'
import {walkFreeList} from './free-list-walk.js'
import {THREAD_CACHE} from '../heap/states.js'
import type {ThreadCache} from '../heap/heap-model.js'
import type {StateMarker} from './state-marker.js'
import type {SizeClasses} from './size-map.js'
import type {Warnings} from '../heap/warnings.js'
import {u64le} from '../util/u64le.js'

/**
 * A ThreadCache: tid is matched through tid_ (= pthread_t: program/thread-pointer.ts) or the thread's TLS pointer;
 * bytes are what TCMalloc says it holds (size_, or max_size_ − size_left_).
 */
export interface ThreadCacheInfo extends ThreadCache {
  pthread: number | null
  objectBytes: number
}

const MAX_CACHES = 1 << 16
const MAX_LIST = 1 << 24

/**
 * Walks ThreadCache::thread_heaps_ → next_ (bounded, cycle-checked) and every cache's free lists.
 * Returns the caches, and calls `owned` for each object found with the cache's index.
 */
export function markThreadCaches(
  memory: AddressSpace,
  threadHeaps: number,
  layout: Layout,
  sizes: SizeClasses,
  threads: Array<{tid: number; pthread: number | null}>,
  marker: StateMarker,
  warnings: Warnings,
  damage: DamageLog,
  owned: (objectIndex: number, cache: number) => void,
  tlsOwners: Map<number, number> = new Map(),
  countAddress: number | null = null,
): ThreadCacheInfo[] {
  const tc = layout.threadCache
  const caches: ThreadCacheInfo[] = []
  const seen = new Set<number>()
  let p = memory.readU64(threadHeaps)
  if (p === undefined) {
    warnings.add('thread-cache', `ThreadCache::thread_heaps_ at ${hex(threadHeaps)} is not in the core`, threadHeaps)
    return caches
  }
  let prev = 0
  while (p !== 0) {
    if (seen.has(p) || caches.length >= MAX_CACHES) {
      warnings.add('thread-cache', `thread cache list loops back to ${hex(p)}`, p)
      break
    }
    seen.add(p)
    const buf = memory.readBytes(p, tc.objectSize)
    if (!buf) {
      warnings.add('thread-cache', `thread cache ${hex(p)} is not in the core`, p)
      break
    }
    // The list is doubly linked: a next_ that skips caches (or jumps into another list) shows here.
    const back = u64le(buf, tc.prev)
    if (back !== prev) warnings.add('thread-cache', `thread cache ${hex(p)}: prev_ is ${hex(back)}, but the list reached it from ${prev ? hex(prev) : 'thread_heaps_'}`, p, back)
    const rd = (off: number, w: number) => (w === 4 ? buf.readInt32LE(off) : Number(buf.readBigInt64LE(off)))
    const size = rd(tc.size, tc.sizeWidth)
    const bytes = tc.sizeIsLeft ? rd(tc.maxSize, tc.maxSizeWidth) - size : size
    const pthread = tc.tid !== null ? u64le(buf, tc.tid) : null
    const owner = (pthread !== null ? threads.find(t => t.pthread === pthread)?.tid : undefined) ?? tlsOwners.get(p) ?? null
    const info: ThreadCacheInfo = {address: p, tid: owner, pthread, inTls: tlsOwners.size > 0 ? tlsOwners.has(p) : null, bytes, objects: 0, objectBytes: 0}
    const index = caches.length
    caches.push(info)
    for (let cl = 1; cl < sizes.count; cl++) {
      const fl = tc.list + cl * tc.freeListSize
      const head = u64le(buf, fl + layout.freeList.list)
      const length = buf.readUInt32LE(fl + layout.freeList.length)
      const cache = p
      const name = () => `thread cache ${hex(cache)}${owner !== null ? ` (thread ${owner})` : ''} class ${cl} list`
      // One entry past length_ is walked: a list longer than its count shows.
      const bound = Math.min(length, MAX_LIST)
      const walked = walkFreeList(
        memory,
        marker,
        {name, structure: p + fl, headSlot: p + fl + layout.freeList.list, head, sizeClass: cl, span: -1, state: THREAD_CACHE, limit: bound + 1, expected: length, classSize: sizes.size[cl]!, tid: owner},
        warnings,
        damage,
        obj => owned(obj, index),
      )
      const n = walked.entries
      if (n !== length) {
        const message = `${name()}: length_ says ${length}, the list has ${n}${n > bound ? ' or more' : walked.broken ? ' before its bad link' : ''}`
        // After a bad link the count disagrees because of it; otherwise the list may be caught mid-update.
        if (walked.broken) warnings.addDamage('thread-cache', message, p + fl)
        else warnings.add('thread-cache', message, p + fl)
      }
      info.objects += n
      info.objectBytes += n * sizes.size[cl]!
    }
    const next = memory.readU64(p + tc.next)
    if (next === undefined) break
    prev = p
    p = next
  }
  // A cache a thread points to that the list never reached: the list was cut, its objects count as live.
  for (const [cache, tid] of tlsOwners) {
    if (!seen.has(cache)) warnings.add('thread-cache', `thread cache ${hex(cache)} of thread ${tid} is not on the thread_heaps_ list: its free objects are counted as live`, cache)
  }
  if (countAddress !== null) {
    const count = memory.readI32(countAddress)
    if (count !== caches.length) {
      warnings.add('thread-cache', `ThreadCache::thread_heap_count_ says ${count ?? 'nothing (not in the core)'}, the thread_heaps_ list has ${caches.length} caches: objects of caches not reached are counted as live`, countAddress)
    }
  }
  return caches
}
