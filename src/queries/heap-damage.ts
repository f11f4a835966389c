import {hex} from '../errors.js'
import type {Program} from '../program/program.js'
import {describeSymbolic} from '../program/program.js'
import {unwindThread} from '../program/unwind.js'
import type {ObjectTypes} from '../graph/object-types.js'
import type {FreePointers} from '../graph/free-pointers.js'
import {TypeNamer} from '../graph/types.js'
import type {AllocatorActivity, HeapModel} from '../heap/heap-model.js'
import type {DamageFinding} from '../heap/damage.js'
import {heapObjects} from '../heap/objects.js'
import {LIVE, STATE_NAMES} from '../heap/states.js'
import {isPageLevelLock} from '../heap/inside-allocator.js'

/** Findings whose victim is searched for among the class's objects (a search reads its spans). */
const SEARCHED_FINDINGS = 16

/** Findings listed in the summary (and the index); past that they are counted. */
export const LISTED_FINDINGS = 200

/** The signals a crash dies of (a core dumped at a stop signal or a breakpoint is no crash). */
const SIGNALS: Record<number, string> = {4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 11: 'SIGSEGV', 31: 'SIGSYS'}

/**
 * What the core says about damage to the heap, as plain JSON-able data (stored in the index): each
 * finding with the likely culprit where the layout tells it, the crashing thread, the threads that
 * were inside the allocator and the locks held, and which of the allocator's figures the damage touches.
 */
export function heapDamage(program: Program, heap: HeapModel, types: ObjectTypes, freePointers: FreePointers, activity: AllocatorActivity) {
  const objects = heapObjects(heap)
  const memory = program.core.memory
  const namer = new TypeNamer(program)
  const typeName = (slot: number) => {
    const id = types.typeOf[slot] ?? 0
    return id ? (types.names[id - 1] ?? null) : null
  }
  const pageHeapLocked = activity.locks.some(isPageLevelLock)

  const crash = crashOf(program, heap, activity)
  const findings = heap.damage.findings.slice(0, LISTED_FINDINGS).map((f, i) => {
    // The free object whose link was overwritten: the entry whose link word held the value, or,
    // when the list's head holds it, the object TCMalloc handed out last from the list (it copied
    // that object's link into the head): an in-use object of the class whose first word is the value.
    // Each search reads the class's spans: for the first SEARCHED_FINDINGS findings only.
    const search = !f.entry && isBadLink(f) && i < SEARCHED_FINDINGS
    // A span's own list index is 16 bits: too narrow to tell the object that held it.
    const held = search && !f.span ? objectHoldingLink(heap, memory, f) : 0
    // Else, when the value is text: the one live object of the class whose text runs to its slot's
    // end with no terminator, a string that went on into the next slot (handed out since).
    const overrun = search && !held ? textRunningPastItsSlot(heap, memory, f) : 0
    const victim = isBadLink(f) ? f.entry || held || overrun : 0
    // Who still points at the free object whose link was written: a use after free's writer.
    const entrySlot = f.entry ? objects.findObject(f.entry) : undefined
    const pointedBy = entrySlot ? holdersOf(entrySlot.index, freePointers, objects, typeName) : []
    const culprit = victim ? culpritBefore(f, victim, heap, objects, memory, typeName, overrun !== 0) : null
    return {
      kind: f.kind,
      structure: f.structure,
      structureAddress: hex(f.structureAddress),
      sizeClass: f.sizeClass,
      classSize: f.sizeClass ? heap.sizeClassSizes[f.sizeClass]! : null,
      tid: f.tid,
      slot: hex(f.slot),
      value: f.value,
      valueMeans: valueMeans(f, namer, memory),
      entry: f.entry ? hex(f.entry) : null,
      /** The object whose link held the value when it was no longer on the list: handed out with the bad link, now in use. */
      handedOut: held ? hex(held) : null,
      objectsBehind: f.objectsBehind,
      bytesBehind: f.bytesBehind,
      /** Of those, found again by their own links and counted free; the rest are counted live. */
      recovered: f.recovered,
      culprit,
      /** Live objects that hold a pointer into the free object whose link is bad (first 8): likely writers through a dangling pointer. */
      pointedBy,
      /** For an entry that is no object's start: the object it lies in (freed through an interior pointer). */
      inside: f.kind === 'entry-not-object-start' ? insideOf(f.target, objects, typeName, heap) : null,
      /** For an object reached twice (freed twice): the object, and where the structure held it first when it tells. */
      twice: f.kind === 'on-a-list-twice' && f.target ? reachedTwice(f, objects, typeName, heap, namer, memory) : null,
      // A doubly linked page-heap list is mid-update while the page heap's lock is held; a thread
      // cache's list while its thread runs TCMalloc's code (FreeList::Push stores the new head before
      // its link: a thread stopped between the two leaves a bad link), unless that thread crashed.
      inFlight:
        ((f.kind === 'half-linked-list' || f.kind === 'counter-disagrees') && pageHeapLocked && !f.impossible) ||
        (f.tid !== null && f.tid !== crash?.tid && activity.threads.some(t => t.tid === f.tid && t.atPc)),
      message: f.message,
    }
  })
  // Objects behind bad links that were not found again: TCMalloc counts them free, toma live.
  const lost = (f: DamageFinding) => Math.max(0, f.objectsBehind - f.recovered)
  const behind = heap.damage.findings.reduce((a, f) => ({objects: a.objects + lost(f), bytes: a.bytes + (lost(f) * f.bytesBehind) / Math.max(1, f.objectsBehind)}), {objects: 0, bytes: 0})
  return {
    findings,
    omitted: heap.damage.count - findings.length,
    /** Free objects behind damaged links: TCMalloc's counts say they are free, the walk could not reach them, so the model counts them live. */
    unknownBehindDamage: behind,
    crash,
    threadsInAllocator: activity.threads.map(t => ({tid: t.tid, atPc: t.atPc, frames: t.frames.map(f => f.name)})),
    locks: activity.locks.map(l => ({name: l.name, address: hex(l.address), word: l.word, sizeClass: l.sizeClass, heldBy: l.heldBy, waiting: l.waiting})),
    pageHeapLockKnown: activity.pageHeapLockKnown,
    danglingPointers: danglingGroups(freePointers, objects, typeName, heap),
    /** Cross-check figures the damage or a structure in flight makes bounds rather than exact counts. */
    touchedFigures: heap.touchedFigures(activity, behind.bytes),
  }
}

export type HeapDamage = ReturnType<typeof heapDamage>

/**
 * The live object right before an overwritten link in the same span: a write past its end lands
 * in the next slot's first word, which is the link while that slot is free. How far the write went
 * is told by how far the free slot's bytes are non-zero from its start: a free slot holds only its
 * link, but it may keep an old object's bytes (more), or have been written since it was handed out
 * (less), so this is the extent the core shows, not a bound.
 */
function culpritBefore(
  f: DamageFinding,
  at: number,
  heap: HeapModel,
  objects: ReturnType<typeof heapObjects>,
  memory: Program['core']['memory'],
  typeName: (slot: number) => string | null,
  byText: boolean,
) {
  const victim = objects.findObject(at)
  if (!victim || victim.start !== at) return null
  const k = victim.index - heap.spans.firstObject[victim.span]!
  if (k === 0) return null
  const before = victim.index - 1
  const address = hex(victim.start - victim.size)
  if (heap.state[before] !== LIVE) return {address, size: victim.size, type: typeName(before), state: STATE_NAMES[heap.state[before]!]!, bytesPastEnd: null, how: 'the slot before the damaged one is free too: no live object wrote past its end there'}
  // How far the write went: the damaged slot's bytes are non-zero from its start this far (its
  // link is the bad value; when that object was handed out since, the value stands for its first
  // word). A string's terminating NUL would be one byte more.
  const value = Buffer.alloc(8)
  value.writeBigUInt64LE(memory.readU64Big(f.slot) ?? 0n)
  const bytes = memory.readBytes(victim.start, victim.size)
  // (A span's own list lives in its free objects: the victim's bytes are as the write left them.)
  if (bytes && (byText || !f.entry) && !f.span) value.copy(bytes)
  let reach = 0
  if (bytes) while (reach < bytes.length && bytes[reach] !== 0) reach++
  return {
    address,
    size: victim.size,
    type: typeName(before),
    state: 'live',
    bytesPastEnd: reach,
    how: byText
      ? f.span
        ? `the one live object of the damaged span whose text runs to the end of its slot with no terminator, before ${hex(at)}, which begins with text: a string that ran on into the next slot, whose bytes held part of the span's free list`
        : `the one live object of class ${f.sizeClass} whose text runs to the end of its slot with no terminator, and the bad value is text: a string that ran on into the next slot, ${hex(at)}`
      : `the live object right before the damaged slot ${hex(at)}`,
  }
}

/** The slot after the one live object of the finding's class whose last 8 bytes are text with no NUL, when the bad value is text; else 0. */
function textRunningPastItsSlot(heap: HeapModel, memory: Program['core']['memory'], f: DamageFinding): number {
  // A span's own list (f.span) holds indices, not the text: there the neighbour must begin with text, in that span.
  const value = memory.readBytes(f.slot, 8)
  if (!f.span && (!value || !isText(value, 0))) return 0
  const only = f.span ? spanStarting(heap, f.span) : undefined
  if (only === -1) return 0
  // The last slot's successor is another span's: not this object's neighbour.
  const culprit = uniqueSlot(
    heap,
    memory,
    f.sizeClass,
    (bytes, k, size, live) => live(k) && live(k + 1) && isText(bytes, (k + 1) * size - 8) && (!f.span || isText(bytes, (k + 1) * size)),
    n => n - 1,
    only,
  )
  return culprit ? culprit + heap.sizeClassSizes[f.sizeClass]! : 0
}

/** The index of the span whose first object is at `start`, or −1. */
function spanStarting(heap: HeapModel, start: number): number {
  const o = heapObjects(heap).findObject(start)
  return o && o.start === start && o.index === heap.spans.firstObject[o.span] ? o.span : -1
}

/** The eight bytes at `at` are printable ASCII (tab, CR and LF included), none of them NUL. */
function isText(bytes: Buffer, at: number): boolean {
  for (let i = at; i < at + 8; i++) {
    const b = bytes[i]!
    if (!((b >= 0x20 && b < 0x7f) || b === 9 || b === 10 || b === 13)) return false
  }
  return true
}

function isBadLink(f: DamageFinding): boolean {
  return f.kind === 'overwritten-link' || f.kind === 'link-into-other-span'
}

/** Spans of a class searched at most for the object a bad head value came from. */
const MAX_SPANS_SEARCHED = 1 << 16

/**
 * The in-use object of the finding's class whose first word is the bad value, when exactly one is:
 * TCMalloc pops a list's head by copying the head object's link into the list, so after it handed
 * out an object whose link was overwritten, the list holds that link and the object still does.
 */
function objectHoldingLink(heap: HeapModel, memory: Program['core']['memory'], f: DamageFinding): number {
  const value = memory.readBytes(f.slot, 8)
  if (!value || value.every(b => b === 0)) return 0
  const lo = value.readUInt32LE(0)
  const hi = value.readUInt32LE(4)
  return uniqueSlot(heap, memory, f.sizeClass, (bytes, k, size, live) => live(k) && bytes.readUInt32LE(k * size) === lo && bytes.readUInt32LE(k * size + 4) === hi)
}

/**
 * The start of the one slot of class `sizeClass` (in-use spans, at most MAX_SPANS_SEARCHED) that
 * `match` picks, or 0 when none or several do. `match` sees a span's bytes, a slot's position, the
 * class's size and whether a position is live. `onlySpan`, when given, is the one span searched.
 */
function uniqueSlot(heap: HeapModel, memory: Program['core']['memory'], sizeClass: number, match: (bytes: Buffer, k: number, size: number, live: (k: number) => boolean) => boolean, count = (n: number) => n, onlySpan?: number): number {
  const {spans} = heap
  const ofClass = onlySpan === undefined ? heap.spansOfClass(sizeClass) : [onlySpan]
  let found = 0
  let matches = 0
  for (let i = 0; i < ofClass.length && i < MAX_SPANS_SEARCHED && matches < 2; i++) {
    const s = ofClass[i]!
    const size = spans.objectSize[s]!
    const n = spans.objectCount[s]!
    const bytes = memory.readBytes(spans.start[s]!, n * size)
    if (!bytes) continue
    const live = (k: number) => heap.state[spans.firstObject[s]! + k] === LIVE
    for (let k = 0; k < count(n); k++) {
      if (!match(bytes, k, size, live)) continue
      found = spans.start[s]! + k * size
      matches++
    }
  }
  return matches === 1 ? found : 0
}

function insideOf(addr: number, objects: ReturnType<typeof heapObjects>, typeName: (slot: number) => string | null, heap: HeapModel) {
  const o = objects.findObject(addr)
  return o ? {address: hex(o.start), offset: addr - o.start, type: typeName(o.index), state: STATE_NAMES[heap.state[o.index]!]!} : null
}

/**
 * The object a finding reached twice: its type by the vtable tier, or by its first word (a cache
 * that keeps its pointers apart from the objects, as a per-CPU slab does, leaves a freed object's
 * vtable pointer in place), and the slot that held it first.
 */
function reachedTwice(f: DamageFinding, objects: ReturnType<typeof heapObjects>, typeName: (slot: number) => string | null, heap: HeapModel, namer: TypeNamer, memory: Program['core']['memory']) {
  const o = objects.findObject(f.target)
  if (!o || o.start !== f.target) return null
  const word = memory.readU64(o.start)
  const byVtable = word !== undefined && word !== 0 ? namer.classOfVtablePointer(word) : null
  return {address: hex(o.start), size: o.size, type: typeName(o.index) ?? byVtable ?? null, state: STATE_NAMES[heap.state[o.index]!]!, reachedFirstAt: f.reachedFirstAt ? hex(f.reachedFirstAt) : null}
}

/** The live objects holding a kept pointer into slot `target`: address, type, the field's offset (the first 8). */
function holdersOf(target: number, free: FreePointers, objects: ReturnType<typeof heapObjects>, typeName: (slot: number) => string | null) {
  const out: Array<{address: string; type: string | null; offset: number; value: string}> = []
  for (let i = 0; i < free.target.length && out.length < 8; i++) {
    if (free.target[i] !== target) continue
    const holder = objects.findObject(free.word[i]!)
    if (holder) out.push({address: hex(holder.start), type: typeName(holder.index), offset: free.word[i]! - holder.start, value: hex(free.value[i]!)})
  }
  return out
}

/** Groups listed of the pointers from live objects into free slots. */
const DANGLING_GROUPS = 20

/**
 * Pointers from live objects into slots that are not live, grouped by what holds them (the type, or
 * the size class of an untyped object) and the field's offset, most first, with the state of the
 * slots they point into. A stale field that is never read again (a pointer kept after delete, an
 * end pointer one past a buffer) is common and harmless; a field the program still reads is a use
 * after free waiting to happen.
 */
function danglingGroups(free: FreePointers, objects: ReturnType<typeof heapObjects>, typeName: (slot: number) => string | null, heap: HeapModel) {
  const groups = new Map<string, {holder: string; offset: number; pointers: number; targets: Record<string, number>; example: {holder: string; target: string}}>()
  for (let i = 0; i < free.word.length; i++) {
    const holder = objects.findObject(free.word[i]!)
    if (!holder) continue
    const name = typeName(holder.index) ?? `untyped ${holder.size}-byte object`
    const offset = free.word[i]! - holder.start
    const key = `${name}\0${offset}`
    let g = groups.get(key)
    if (!g) groups.set(key, (g = {holder: name, offset, pointers: 0, targets: {}, example: {holder: hex(holder.start), target: hex(free.value[i]!)}}))
    g.pointers++
    const state = STATE_NAMES[heap.state[free.target[i]!]!] ?? 'free'
    g.targets[state] = (g.targets[state] ?? 0) + 1
  }
  const list = [...groups.values()].sort((a, b) => b.pointers - a.pointers)
  return {count: free.count, kept: free.word.length, groups: list.slice(0, DANGLING_GROUPS), moreGroups: Math.max(0, list.length - DANGLING_GROUPS)}
}

/** What a bad value is, when it is something: a vtable (the slot is in use as an object of that class), or text. */
function valueMeans(f: DamageFinding, namer: TypeNamer, memory: Program['core']['memory']): string | null {
  const big = memory.readU64Big(f.slot)
  if (big === undefined) return null
  const n = Number(big)
  if (f.kind === 'on-a-list-twice') {
    return n === f.entry
      ? `the free object ${hex(n)} links to itself: pushed twice in a row, freed twice (a double free); whatever its link held before is lost`
      : `${hex(n)} was reached earlier on a free list: the object is on TCMalloc's lists twice, freed twice (a double free), or the list loops`
  }
  if (Number.isSafeInteger(n) && n !== 0) {
    const cls = namer.classOfVtablePointer(n)
    if (cls) return `a vtable pointer of ${cls}: the slot at ${hex(f.slot)} holds an object in use (handed out while still on a free list: a double free, or a use after free)`
  }
  const bytes = Buffer.alloc(8)
  bytes.writeBigUInt64LE(big)
  const printable = [...bytes].filter(b => (b >= 0x20 && b < 0x7f) || b === 9 || b === 10 || b === 13).length
  if (printable >= 6) return `text: "${[...bytes].map(b => (b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('')}" (a string written over the link)`
  return null
}

/** The thread that took the fatal signal: where it stopped, whether in TCMalloc, and whether it held a bad link's value. */
function crashOf(program: Program, heap: HeapModel, activity: AllocatorActivity) {
  // A core taken from outside (gcore of a stopped process) names the stop signal: no crash.
  const signal = program.core.signal && SIGNALS[program.core.signal.signo] ? program.core.signal : null
  const thread = program.core.threads.find(t => SIGNALS[t.signal] !== undefined) ?? (signal ? program.core.threads[0] : undefined)
  if (!thread) return null
  const signo = signal?.signo ?? thread.signal
  const frames = unwindThread(program, thread).frames.slice(0, 12)
  const inside = activity.threads.find(t => t.tid === thread.tid)
  // A register holding a bad link's exact value: the thread was following that link.
  const following = heap.damage.findings.find(f => f.value.startsWith('0x') && f.value !== '0x0' && [...thread.registers].some(r => r === BigInt(f.value)))
  const register = following ? program.core.arch.registerNames[[...thread.registers].findIndex(r => r === BigInt(following.value))] : null
  return {
    tid: thread.tid,
    signal: signo,
    signalName: SIGNALS[signo] ?? `signal ${signo}`,
    faultAddress: signal?.faultAddress != null ? hex(signal.faultAddress) : null,
    inAllocator: inside !== undefined,
    frames: frames.map(f => describeSymbolic(program.symbolize(f.level === 0 ? f.pc : f.pc - 1))),
    following: following ? {structure: following.structure, value: following.value, register} : null,
  }
}
