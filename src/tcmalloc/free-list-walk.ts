import {hex} from '../errors.js'
import {USER_SPACE_END, type AddressSpace} from '../core/address-space.js'
import {hexWord} from '../core/words.js'
import type {DamageKind, DamageLog} from '../heap/damage.js'
import {recoverTail} from './list-tail.js'
import {STATE_NAMES} from '../heap/states.js'
import {ALREADY_FREE, NOT_IN_HEAP, NOT_OBJECT_START, OTHER_CLASS, type StateMarker} from './state-marker.js'
import type {Warnings} from '../heap/warnings.js'

/** One singly linked free list of TCMalloc (a thread cache's, a span's, a transfer slot's). */
export interface FreeList {
  /** The list in words, for warnings and findings (a function: most lists never need it). */
  name: () => string
  /** The structure that holds the list (FreeList, span record, transfer slot). */
  structure: number
  /** The word that holds the first entry. */
  headSlot: number
  head: number
  sizeClass: number
  /** The span every entry must lie in (a span's own list), or −1: any span of the class. */
  span: number
  /** The state its objects are marked with. */
  state: number
  /** Entries walked at most. */
  limit: number
  /** How many entries the structure says it holds (length_, a batch, capacity − refcount), or null. */
  expected: number | null
  classSize: number
  tid: number | null
}

export interface Walked {
  /** Entries walked: objects marked, plus entries that were no object start but linked on. */
  entries: number
  /** The last entry walked (0: none). */
  last: number
  /** A bad link ended the walk before the list's end. */
  broken: boolean
}

/**
 * Walks a free list, marking each entry's slot. A link that is no free object of the list ends
 * the walk: a warning and a damage finding give the word that held it, its value in full, and how
 * many objects the list's count says lay behind it. One exception goes on: an entry inside an
 * object of the right span whose own word links to a proper entry (or ends the list) is what
 * freeing an interior pointer leaves; it is reported and skipped, and the rest of the list, which
 * is intact, is still marked.
 */
export function walkFreeList(memory: AddressSpace, marker: StateMarker, list: FreeList, warnings: Warnings, damage: DamageLog, onMarked?: (index: number) => void): Walked {
  let p = list.head
  let slot = list.headSlot
  let entry = 0
  let n = 0
  let last = 0
  while (p !== 0 && n < list.limit) {
    const index = marker.check(p, list.sizeClass, list.span)
    if (index >= 0) {
      marker.mark(index, list.state)
      onMarked?.(index)
    } else if (index === NOT_OBJECT_START && linksOn(memory, marker, list, p)) {
      const inside = marker.slotAt(p)
      const start = marker.slotStart(inside)
      const message = `${list.name()}: entry ${hex(p)} is ${p - start} bytes into the object at ${hex(start)} (freed through an interior pointer); its word links on to the intact rest of the list`
      warnings.addDamage('free-list', message, list.structure, p)
      report(list, damage, 'entry-not-object-start', slot, memory, entry, p, 0, 0, message)
    } else {
      const why = whyNot(index, marker, p, list)
      const behind = list.expected === null ? -1 : Math.max(0, list.expected - n)
      // The objects behind the bad link that their own links still tell (list-tail.ts); searched
      // for the first MAX_TAIL_SEARCHES broken lists only: each search reads the class's spans.
      const tail = behind > 0 && damage.tailSearches++ < MAX_TAIL_SEARCHES ? recoverTail(memory, marker, list.sizeClass, list.span, behind) : []
      for (const obj of tail) {
        marker.mark(obj, list.state)
        onMarked?.(obj)
      }
      const lost = behind - tail.length
      const fate =
        behind <= 0
          ? ''
          : `; ${behind} object(s) the list counts lie behind it${tail.length ? `: ${tail.length} found again by their own links (the end every chain of ${behind} such objects shares), counted free` : ''}${lost > 0 ? `${tail.length ? ';' : ':'} ${lost} unreachable, which ones their links do not tell: counted live` : ''}`
      const message = `${list.name()}: ${entry ? `the link of free object ${hex(entry)}` : 'the head'} (${hex(slot)}) holds ${hexWord(memory, slot)}, ${why}${fate}`
      warnings.addDamage('free-list', message, list.structure, slot, ...(isAddress(p) ? [p] : []))
      report(list, damage, kindOf(index), slot, memory, entry, p, behind, tail.length, message)
      return {entries: n + tail.length, last, broken: true}
    }
    n++
    last = p
    entry = p
    slot = p
    // The link as read before the walks (first-words.ts), else from the core: an entry that is no object start, or a word not read.
    const read = index >= 0 && marker.firstWords !== null ? marker.firstWords[index]! : NaN
    const next = Number.isNaN(read) ? memory.readU64(p) : read
    if (next === undefined) {
      warnings.add('free-list', `${list.name()}: free object ${hex(p)} is not in the core; the list cannot be followed past it`, list.structure, p)
      return {entries: n, last, broken: true}
    }
    p = next
  }
  return {entries: n, last, broken: false}
}

/** Broken lists whose lost tail is searched for (a core with more is damaged throughout). */
const MAX_TAIL_SEARCHES = 64

/** A value that can be a user-space address (anything else would be rounded as a number: its exact hex is in the message). */
function isAddress(v: number): boolean {
  return v > 0 && v < USER_SPACE_END
}

/** Whether the word at an interior entry links to a proper entry of the list, or ends it. */
function linksOn(memory: AddressSpace, marker: StateMarker, list: FreeList, p: number): boolean {
  const span = marker.lastSpan
  const inside = marker.slotAt(p)
  if (inside < 0) return false
  const next = memory.readU64(p)
  const ok = next !== undefined && (next === 0 || marker.check(next, list.sizeClass, list.span) >= 0)
  marker.lastSpan = span
  return ok
}

function whyNot(code: number, marker: StateMarker, p: number, list: FreeList): string {
  const s = marker.lastSpan
  const spans = marker.spans
  if (code === NOT_IN_HEAP) return 'which is in no span of the page heap'
  if (code === OTHER_CLASS) {
    if (list.span >= 0 && s !== list.span) return `outside span ${hex(spans.record[list.span]!)} (in ${s < 0 ? 'no span' : `span ${hex(spans.record[s]!)}`})`
    return `which is in span ${hex(spans.record[s]!)} of class ${spans.sizeClass[s]}${spans.location[s] !== 0 ? ' (a free span)' : ''}, not class ${list.sizeClass}`
  }
  if (code === NOT_OBJECT_START) return `which is not the start of an object of span ${hex(spans.record[s]!)}`
  return `which is an object already ${stateAt(marker, p)} (on two lists, or twice on this one: a double free, or a cycle)`
}

function stateAt(marker: StateMarker, p: number): string {
  const slot = marker.slotAt(p)
  return slot < 0 ? 'free' : STATE_NAMES[marker.state[slot]!]!
}

function kindOf(code: number): DamageKind {
  if (code === ALREADY_FREE) return 'on-a-list-twice'
  if (code === OTHER_CLASS || code === NOT_OBJECT_START) return 'link-into-other-span'
  return 'overwritten-link'
}

function report(list: FreeList, damage: DamageLog, kind: DamageKind, slot: number, memory: AddressSpace, entry: number, target: number, behind: number, recovered: number, message: string): void {
  damage.add({
    kind,
    structure: list.name(),
    structureAddress: list.structure,
    sizeClass: list.sizeClass,
    tid: list.tid,
    slot,
    value: hexWord(memory, slot),
    entry,
    target: isAddress(target) ? target : 0,
    objectsBehind: behind,
    recovered,
    bytesBehind: behind > 0 ? behind * list.classSize : 0,
    message,
  })
}
