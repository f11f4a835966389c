import {hex} from '../errors.js'
import type {HeapIndex, SpanEntry} from '../index/heap-index.js'
import {describeAddress, placeLabel, type AddressPlace} from '../program/describe-address.js'
import type {Program} from '../program/program.js'
import {publicIdsOf} from './object-ids.js'
import {regionLabel, regionOf} from '../graph/root-regions.js'
import {cString, stdStringOwner} from './strings.js'
import {RetentionIndex} from '../index/retention-index.js'
import {objectBrief} from './object-brief.js'
import {storedSightings} from '../index/sighting-index.js'
import {allocationOfSpan} from './allocations.js'
import {storedHolderName} from './holder-groups.js'
import {u64le} from '../util/u64le.js'
import {USER_SPACE_END} from '../core/address-space.js'

/** Bytes shown around the address unless asked otherwise, and the most that may be asked. */
export const DUMP_BYTES = 64
export const MIN_DUMP_BYTES = 16
export const MAX_DUMP_BYTES = 4096

/**
 * Everything toma knows about the heap object holding an address (or where a non-heap address
 * is): its public id (the JSON export's), state, type, and `dumpBytes` of its memory around the
 * address, each aligned word that points somewhere labelled with what it points to.
 */
export function objectInfo(program: Program, index: HeapIndex, address: number, withStrings: boolean, dumpBytes = DUMP_BYTES) {
  const obj = index.objectAt(address)
  if (!obj) {
    const place = describeAddress(program, address)
    // Inside a scanned root region (a pool in an anonymous mapping, a cached stack): say which, so
    // a pointer stored here is known to be a root.
    const region = regionOf(index.meta.rootRegions, address)
    return {
      address: hex(address),
      heap: false as const,
      place: placeOut(place),
      label: placeLabel(place, program.core.arch.sp),
      root: region ? {kind: region.kind, label: regionLabel(region, address)} : null,
      warnings: index.meta.moduleWarnings,
    }
  }
  const memory = program.core.memory
  const state = index.state(obj.index)
  const owner = state === 'thread-cache' ? index.threadOf(obj.index) : undefined
  const window = dumpWindow(obj.start, obj.size, address, Math.min(Math.max(MIN_DUMP_BYTES, dumpBytes), MAX_DUMP_BYTES))
  const bytes = memory.readBytes(window.from, window.length)
  const words = bytes ? pointingWords(program, index, bytes, window.from, obj.start) : []
  const span = obj.span
  const ids = publicIdsOf(index, [obj.index, ...words.flatMap(w => (w.slot === undefined ? [] : [w.slot]))])
  // A model-stage index has no graph: who holds the object is not known yet.
  const graph = index.holds('graph')
  const retention = graph ? new RetentionIndex(index) : null
  const idom = state === 'live' && retention ? retention.idom(obj.index) : null
  return {
    address: hex(address),
    heap: true as const,
    object: {
      id: ids.get(obj.index)!,
      address: hex(obj.start),
      size: obj.size,
      offset: address - obj.start,
      state,
      thread: owner ? {tid: owner.tid, threadCache: hex(owner.cache), cpu: owner.cpu} : null,
      sizeClass: index.sizeClass(obj),
      ...objectNaming(index, obj.index, state === 'live', graph),
      /** false: the index holds the heap model only; `held` is null and names are by vtable alone. */
      graph,
      // Why it is held (live objects): reachable from a root, what it retains, who dominates it.
      held:
        state === 'live' && retention
          ? {
              reachable: retention.parent(obj.index) !== null,
              /** No root of the program reaches it, and the allocator keeps it for itself: no leak. */
              allocatorOwn: index.reachability(obj.index) === 'allocator',
              retained: retention.retained(obj.index),
              immediateDominator: typeof idom === 'number' ? objectBrief(index, idom) : null,
              onlyThread: typeof idom === 'object' && idom !== null ? idom.thread : null,
            }
          : null,
      // Not a root: where a returned call's frame still points at it (who last handled it).
      lastSeen: storedSightings(index).get(obj.index) ?? [],
      span: spanBrief(index.span(span)),
      // TCMalloc sampled it (TCMALLOC_SAMPLE_PARAMETER): the size asked for and its allocation stack.
      allocation: allocationOfSpan(program, index, span),
      bytes: bytes
        ? {
            /** Offset of the first byte shown, from the object's start. */
            offset: window.from - obj.start,
            length: window.length,
            hex: bytes.toString('hex'),
            ascii: bytes.toString('latin1').replace(/[^\x20-\x7e]/g, '.'),
            words: words.map(({slot, ...w}) => {
              if (w.to.kind === 'object') w.to.id = ids.get(slot!)!
              return w
            }),
          }
        : null,
      strings: withStrings
        ? {
            cString: cString(memory, address),
            stdString: state === 'live' ? stdStringOwner(memory, index, obj.index, obj.start, obj.size) : null,
          }
        : undefined,
    },
    /** What the analysis could not know (a module file missing: the types of its classes). */
    warnings: index.meta.moduleWarnings,
  }
}

export type ObjectInfo = ReturnType<typeof objectInfo>

/**
 * What a live object is called and how that was known: `type` is its exact C/C++ type (by vtable
 * or debug information) or null; `name`, `kind` and `via` are any tier's (via.ts); an object no
 * tier names gets its holder's name instead (`via` 'holder': what holds it, not what it is).
 */
function objectNaming(index: HeapIndex, slot: number, live: boolean, graph: boolean) {
  const id = live ? index.typeId(slot) : 0
  if (id !== 0) {
    const via = index.via(slot)
    const name = index.typeName(id)
    return {type: via === 'vtable' || via === 'debug-info' ? name : null, name, kind: index.typeKind(id), via}
  }
  // Holders were found on the graph by analyze (holder-groups.ts storedHolders).
  const held = live && graph ? storedHolderName(index, slot) : null
  return {type: null, name: held === null ? null : `held by ${held}`, kind: held === null ? null : 'holder', via: held === null ? null : ('holder' as const)}
}

/** `length` bytes of the object around `address`: whole 16-byte lines from the object's start, the address's line in the middle, inside the object. */
function dumpWindow(start: number, size: number, address: number, length: number): {from: number; length: number} {
  const n = Math.min(length, size)
  const line = Math.floor((address - start) / 16) * 16
  const from = Math.max(0, Math.min(line - Math.floor(n / 32) * 16, size - n))
  return {from: start + from, length: n}
}

export type PointingWord = {offset: number; value: string; slot?: number} & (
  | {to: {kind: 'object'; id: number; address: string; offset: number; state: string; type: string | null}}
  | {to: {kind: 'stack' | 'module'; label: string}}
)

/** The 8-byte aligned words of a dump that hold an address of a heap object, a module's symbol or a stack. */
export function pointingWords(program: Program, index: HeapIndex, bytes: Buffer, from: number, objectStart: number): PointingWord[] {
  const words: PointingWord[] = []
  for (let at = (8 - ((from - objectStart) % 8)) % 8; at + 8 <= bytes.length; at += 8) {
    const value = u64le(bytes, at)
    if (value < 4096 || value >= USER_SPACE_END) continue
    const offset = from + at - objectStart
    const target = index.objectAt(value)
    if (target) {
      const state = index.state(target.index)
      words.push({offset, value: hex(value), slot: target.index, to: {kind: 'object', id: -1, address: hex(target.start), offset: value - target.start, state, type: state === 'live' ? index.type(target.index) : null}})
      continue
    }
    const place = describeAddress(program, value)
    if (place.kind === 'module' || place.kind === 'stack') words.push({offset, value: hex(value), to: {kind: place.kind, label: placeLabel(place, program.core.arch.sp)}})
  }
  return words
}

function placeOut(p: AddressPlace) {
  if (p.kind === 'stack' || p.kind === 'anonymous') return {...p, mapping: p.mapping.map(a => hex(a))}
  return p
}

function spanBrief(span: SpanEntry) {
  return {record: hex(span.record), start: hex(span.start), pages: span.pages}
}
