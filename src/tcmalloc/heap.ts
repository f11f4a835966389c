import {TomaError, hex} from '../errors.js'
import type {Program} from '../program/program.js'
import {findAllocatorModule} from './allocator-module.js'
import {checkUnusedTransferSlots, markSpanFreeLists, markTransferCache, readCentralCounters, type UncountedSpans} from './central-cache.js'
import {crossCheck, stateTotals} from './counters.js'
import type {ModelledHeap, ModelOptions} from '../heap/heap-model.js'
import {locateGlobals, type AllocatorGlobals} from './globals.js'
import {PAGE_HEAP, RETURNED} from '../heap/states.js'
import {StateMarker} from './state-marker.js'
import {ON_NORMAL_FREELIST, ON_RETURNED_FREELIST, readSpans, type SpanTable} from './spans.js'
import {markThreadCaches, type ThreadCacheInfo} from './thread-caches.js'
import {readSampledAllocations} from './sampled.js'
import {threadCachesByTls} from './thread-tls.js'
import {Warnings} from '../heap/warnings.js'
import {DamageLog} from '../heap/damage.js'
import {hexWord} from '../core/words.js'
import {GrowableF64} from '../util/growable.js'
import {sharedUint8} from '../util/shared-arrays.js'
import {TakeOnce} from '../util/take-once.js'
import {firstWordsOf} from '../heap/first-words.js'
import {pthreadAddress} from '../program/thread-pointer.js'

/** The heap as TCMalloc sees it: every span, every object slot with its state, and the cross-check. */
export interface TcmallocHeap extends ModelledHeap {
  globals: AllocatorGlobals
  spans: SpanTable
  threadCaches: ThreadCacheInfo[]
  /** Classes whose central counters disagree with their spans (central-cache.ts). */
  uncountedSpans: UncountedSpans[]
}

export function analyzeHeap(program: Program, options: ModelOptions = {}): TcmallocHeap {
  const module = findAllocatorModule(program)
  if (!module) throw noTcmalloc(program)
  options.progress?.('allocator globals', 0, 1)
  const cut = program.core.truncation
  let globals: AllocatorGlobals
  try {
    globals = locateGlobals(program, module, {versionOverride: options.version, signaturesOnly: options.signaturesOnly})
  } catch (e) {
    if (e instanceof TomaError && module.guessed) throw noTcmalloc(program)
    if (e instanceof TomaError && cut) throw new TomaError(`${e.message}; the core is truncated (bytes from ${hex(cut.firstAddress)} on are missing)`)
    throw e
  }
  const memory = program.core.memory
  const {layout, sizes} = globals
  const warnings = new Warnings()
  if (cut) {
    warnings.add('core', `the core is truncated: ${cut.segments} segment(s) miss ${cut.missingBytes} bytes from ${hex(cut.firstAddress)} on; objects there cannot be read`, cut.firstAddress)
  }
  for (const [start, end] of program.core.overlapping.slice(0, 5)) {
    warnings.add('core', `the core's segment ${hex(start)}-${hex(end)} overlaps the next one: it is read only up to where that one begins`, start)
  }
  for (const seg of program.core.partlyDumped.slice(0, 5)) {
    warnings.add('core', `the core holds ${seg.fileSize} of the ${seg.end - seg.start} bytes of writable segment ${hex(seg.start)}-${hex(seg.end)} (p_filesz < p_memsz): the rest is absent, not read or scanned`, seg.start)
  }
  const damage = new DamageLog()
  for (const p of globals.pageHeapProblems) {
    const message = `${p.message}: the page heap was caught mid-update or is damaged; spans are read from the page map all the same`
    warnings.add('page-heap', message, p.address)
    damage.add({kind: p.counter ? 'counter-disagrees' : 'half-linked-list', structure: p.structure, structureAddress: p.address, sizeClass: 0, tid: null, slot: p.slot, value: hexWord(memory, p.slot), entry: 0, target: 0, objectsBehind: -1, recovered: 0, bytesBehind: 0, message, ...(p.impossible ? {impossible: p.impossible} : {})})
  }
  options.progress?.('page map', 0, 1)
  const spans = readSpans(memory, globals.pageHeap, layout, sizes, warnings, page => options.progress?.('page map', page, 2 ** (48 - layout.pageShift)))
  // Shared: the dominator pass's worker reads which slots are live from it.
  const state = sharedUint8(spans.totalObjects)
  for (let s = 0; s < spans.count; s++) {
    if (spans.location[s] === ON_NORMAL_FREELIST) state[spans.firstObject[s]!] = PAGE_HEAP
    else if (spans.location[s] === ON_RETURNED_FREELIST) state[spans.firstObject[s]!] = RETURNED
  }
  // Every in-use slot's first word, in large reads: a free object's is its link, so the walks below
  // need not read the heap block by block, and the live objects' are the model stage's vtables.
  options.progress?.('first words', 0, 1)
  const slotWords = firstWordsOf(memory, {spans, state, pageSize: layout.pageSize}, (done, total) => options.progress?.('first words', done, total))
  const marker = new StateMarker(spans, state, layout.pageSize, slotWords)
  const central = readCentralCounters(memory, globals.centralCache, layout, sizes)
  options.progress?.('central cache', 0, 3)
  const uncountedSpans = markSpanFreeLists(memory, spans, marker, central, sizes, cl => globals.centralCache + cl * layout.central.stride, warnings, damage)
  options.progress?.('transfer cache', 1, 3)
  markTransferCache(memory, globals.centralCache, layout, sizes, central, marker, warnings, damage)
  options.progress?.('thread caches', 2, 3)
  const ownedObjects = new GrowableF64()
  const ownedBy: number[] = []
  const threadCaches =
    globals.threadHeaps === null
      ? []
      : markThreadCaches(
          memory,
          globals.threadHeaps,
          layout,
          sizes,
          program.core.threads.map(t => ({tid: t.tid, pthread: pthreadAddress(program, t)})),
          marker,
          warnings,
          damage,
          (obj, cache) => {
            ownedObjects.push(obj)
            ownedBy.push(cache)
          },
          threadCachesByTls(program, module, layout.group, program.core.threads),
          globals.threadHeapCount,
        )
  if (globals.threadHeaps === null) warnings.add('thread-cache', 'ThreadCache::thread_heaps_ not found: objects in thread caches are counted as live')
  checkUnusedTransferSlots(memory, globals.centralCache, layout, sizes, central, marker, warnings)
  // Thread-cache objects sorted by slot, so a query finds the owning cache by binary search.
  const objs = ownedObjects.toArray()
  const order = Uint32Array.from(objs.keys()).sort((a, b) => objs[a]! - objs[b]!)
  const threadCacheObjects = Float64Array.from(order, i => objs[i]!)
  const threadCacheOwner = Uint16Array.from(order, i => ownedBy[i]!)
  options.progress?.('totals and cross-check', 0, 1)
  const totals = stateTotals(spans, state, layout.pageSize)
  const checks = crossCheck(memory, globals.pageHeap, layout, sizes, central, threadCaches, spans, totals, globals.threadHeaps !== null)
  const sampled = readSampledAllocations(program, module, globals, spans, layout.pageSize, warnings)
  return {
    module,
    globals,
    pageSize: layout.pageSize,
    spans,
    state,
    threadCaches,
    uncountedSpans,
    threadCacheObjects,
    threadCacheOwner,
    totals,
    crossCheck: checks,
    sampled,
    warnings,
    damage,
    slotWords: new TakeOnce(slotWords),
  }
}

function noTcmalloc(program: Program): TomaError {
  return new TomaError(
    `${program.coreFile}: no TCMalloc in this process (no libtcmalloc mapped, no module with tcmalloc's symbols, none of its structures in the executable)`,
  )
}
