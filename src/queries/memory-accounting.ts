import {PF_W} from '../core/core-header.js'
import type {Segment} from '../core/address-space.js'
import {hex} from '../errors.js'
import {regionOf} from '../graph/root-regions.js'
import type {HeapIndex} from '../index/heap-index.js'
import {STATE_NAMES} from '../heap/states.js'
import type {Program} from '../program/program.js'
import type {HeapSummary} from './heap-summary.js'
import type {MetadataInSegment} from './metadata-extent.js'
import {heapPartLines, type AccountLine} from './memory-heap-parts.js'
import {STATES, spanSlotStates} from './span-slot-states.js'
import {mappingAnchors, type MappingAnchor} from './mapping-anchors.js'
import {otherAllocatorHeaps} from '../allocators.js'
import type {OtherAllocatorHeap, OtherAllocatorInputs} from '../heap/other-allocator.js'

export type {AccountLine} from './memory-heap-parts.js'
import type {StatePlace} from '../heap/heap-model.js'

/** A span's location (the index's span.location): in use, free on the normal list, free and returned to the system. */
export const SPAN_IN_USE = 0


/** One thread's stack: its mapping's bytes and the part above the stack pointer (in use, its TLS and descriptor included). */
export interface StackLine {
  tid: number
  mapping: string
  bytes: number
  aboveSp: number
}

/** One anonymous mapping of the "other anonymous mappings" line, with what points into it. */
export interface AnonymousMappingLine {
  mapping: string
  /** Its bytes in the line (the mapping less any spans and located metadata in it), and of those the bytes in the core file. */
  bytes: number
  inCore: number
  /** Globals and stack slots whose words, read in the core, point into it outside the heap's object slots (empty: no anchor found). */
  anchors: MappingAnchor[]
}

/** Anchors named per anonymous mapping (the first ones found, in root-region order). */
const ANCHORS_PER_MAPPING = 4

/**
 * Every byte of the process's writable mappings once (the core's writable PT_LOAD segments, one a
 * mapping): the heap's spans split by what their bytes hold, the allocator's metadata, the
 * threads' stacks, the modules' data, other file-backed and anonymous mappings. The lines add up
 * to the mapped total exactly; what no line explains is a line of its own (remainder), never
 * dropped. Bytes in the core file and bytes only mapped (a segment the core holds in part) are
 * told apart per group.
 */
export function memoryAccounting(program: Program, index: HeapIndex) {
  const summary = index.meta.summary as unknown as HeapSummary
  const counter = (property: string) => {
    const c = summary.crossCheck.find(x => x.property === property)
    return c ? {property, bytes: c.tcmalloc} : undefined
  }
  const heap = heapParts(index)
  const segments = program.core.memory.segments.filter(s => s.flags & PF_W)
  const metadata = (summary.graph as {allocatorMetadata?: {bytes: number; bySegment: MetadataInSegment[]; outsideSegments: number}} | null)?.allocatorMetadata ?? null
  const metadataBySegment = new Map((metadata?.bySegment ?? []).map(m => [m.segment, m.bytes]))
  const spans = spanRanges(index)
  const spanIn = rangeBytesBySegment(spans, segments)
  // Other allocators' memory (glibc's heap, when something bypassed the model's allocator) is carved out as the spans are.
  const tls = (index.meta.rootRegions ?? []).filter(r => r.kind === 'tls')
  const others = otherAllocatorHeaps(program, {spans, tls})
  const otherRanges = others.flatMap(o => o.ranges).sort((a, b) => a.start - b.start)
  const otherIn = rangeBytesBySegment({count: otherRanges.length, start: i => otherRanges[i]!.start, end: i => otherRanges[i]!.end}, segments)
  const stackOf = new Map<number, {tid: number; rsp: number}>()
  for (const t of program.core.threads) {
    const seg = program.core.memory.segmentAt(t.sp)
    if (seg && seg.flags & PF_W && !stackOf.has(seg.start)) stackOf.set(seg.start, {tid: t.tid, rsp: t.sp})
  }
  const groups = {stacks: 0, modules: 0, files: 0, anonymous: 0}
  /** The located metadata by the group of mapping it lies in (the lines above hold the rest of each group). */
  const metadataIn = {stacks: 0, modules: 0, files: 0, anonymous: 0}
  const inCore = {heap: 0, metadata: 0, stacks: 0, modules: 0, files: 0, anonymous: 0}
  const stacks: StackLine[] = []
  const anonymous: Array<{start: number; end: number; bytes: number; inCore: number}> = []
  let mapped = 0
  let present = 0
  let heapInSegments = 0
  let metadataInSegments = 0
  let previousModuleEnd = -1
  for (const seg of segments) {
    const size = seg.end - seg.start
    mapped += size
    present += seg.presentSize
    const spans = spanIn.get(seg.start) ?? {bytes: 0, present: 0}
    const meta = metadataBySegment.get(seg.start) ?? 0
    heapInSegments += spans.bytes
    metadataInSegments += meta
    inCore.heap += spans.present
    // Metadata is taken as present where its segment is whole in the core (the usual case); else as absent.
    const metaPresent = seg.presentSize === size ? meta : 0
    inCore.metadata += metaPresent
    const other = otherIn.get(seg.start) ?? {bytes: 0, present: 0}
    const rest = size - spans.bytes - meta - other.bytes
    const restPresent = Math.max(0, seg.presentSize - spans.present - metaPresent - other.present)
    const stack = stackOf.get(seg.start)
    // A module's .bss is the anonymous mapping right after its writable file mapping.
    const file = program.core.fileAt(seg.start)
    const moduleData = program.core.moduleAt(seg.start) !== undefined || (!file && previousModuleEnd === seg.start)
    const kind = stack ? 'stacks' : moduleData ? 'modules' : file ? 'files' : 'anonymous'
    previousModuleEnd = file && program.core.moduleAt(seg.start) ? seg.end : -1
    groups[kind] += rest
    metadataIn[kind] += meta
    inCore[kind] += restPresent
    if (kind === 'anonymous' && rest > 0) anonymous.push({start: seg.start, end: seg.end, bytes: rest, inCore: restPresent})
    if (stack) stacks.push({tid: stack.tid, mapping: `${hex(seg.start)}-${hex(seg.end)}`, bytes: rest, aboveSp: Math.max(0, seg.end - stack.rsp)})
  }
  const allocator = index.meta.summary.allocator.kind ?? null
  const places = (summary as {statePlaces?: StatePlace[]}).statePlaces ?? []
  const heapLines = heapPartLines(allocator, {state: heap.state, tailWaste: heap.tailWaste, places, counter})
  const heapBytes = heap.spanBytes
  const lines: AccountLine[] = [
    {part: 'heap (the allocator\'s spans)', bytes: heapInSegments, inCore: inCore.heap, ...(allocator === 'google/tcmalloc' ? {property: 'generic.heap_size + tcmalloc.page_heap_unmapped'} : {allocator: counter('generic.heap_size')})},
    metadata
      ? {part: 'allocator metadata (as toma located it)', bytes: metadataInSegments, inCore: inCore.metadata, note: allocator === 'google/tcmalloc' ? 'tcmalloc\'s metadata arena (the mappings of its metadata tag), whole: tcmalloc.metadata_bytes counts the part of it in use' : 'the part of TCMalloc\'s metadata toma finds (span and thread-cache records, page map, current blocks); the rest is in other anonymous mappings'}
      : {part: 'allocator metadata', bytes: 0, inCore: 0, note: 'not in this index (made before toma memory): counted in other anonymous mappings; analyze again to split it out'},
    ...others.map(o => otherAllocatorLine(o, segments)),
    {part: 'thread stacks', bytes: groups.stacks, inCore: inCore.stacks},
    {part: 'modules\' data (writable segments and .bss)', bytes: groups.modules, inCore: inCore.modules},
    {part: 'other file-backed mappings', bytes: groups.files, inCore: inCore.files},
    {part: 'other anonymous mappings', bytes: groups.anonymous, inCore: inCore.anonymous},
  ]
  // A word pointing at a heap object's slot holds that object, not the mapping the span lies in.
  // Nor does a word pointing into another allocator's memory carved out of the mapping.
  const anchors = mappingAnchors(program, index, anonymous, ANCHORS_PER_MAPPING, {skip: target => index.objectAt(target) !== undefined || regionOf(otherRanges, target) !== undefined, heapBlocks: true})
  const anonymousMappings: AnonymousMappingLine[] = anonymous.map((m, i) => ({mapping: `${hex(m.start)}-${hex(m.end)}`, bytes: m.bytes, inCore: m.inCore, anchors: anchors[i]!}))
  const explained = lines.reduce((a, l) => a + l.bytes, 0)
  return {
    /** Writable mappings of the process: their bytes, and those the core file holds. */
    mapped: {bytes: mapped, inCore: present, mappings: segments.length},
    lines,
    /** What no line explains (mapped − the lines' sum): 0 when everything is accounted for. */
    remainder: mapped - explained,
    metadataIn,
    /** The heap's spans split by what their bytes hold; the parts add up to the spans' bytes. */
    heap: {
      bytes: heapBytes,
      parts: heapLines,
      /** Span bytes in no writable segment of the core (a core that misses part of the heap): counted in no line above. */
      outsideSegments: heapBytes - heapInSegments,
    },
    metadataOutsideSegments: metadata?.outsideSegments ?? 0,
    /** Other allocators found in the process (glibc malloc's main arena): their parts, counters and what was not proven. */
    otherAllocators: others,
    stacks,
    /** The "other anonymous mappings" line split per mapping (largest first): they add up to it. */
    anonymousMappings: anonymousMappings.sort((a, b) => b.bytes - a.bytes),
  }
}

/** Span bytes by state of the slots (states.ts order), tail waste of small-object spans, and all span bytes. */
function heapParts(index: HeapIndex) {
  const state = new Float64Array(STATE_NAMES.length)
  const {spanPages, spanObjectCount, spanObjectSize, spanLocation} = index
  // Each span's slots by state, counted once (span-slot-states.ts): whole numbers of bytes, so the
  // sums are the same whatever their order.
  const counts = spanSlotStates(index)
  let spanBytes = 0
  let tailWaste = 0
  for (let s = 0; s < spanPages.length; s++) {
    const bytes = spanPages[s]! * index.pageSize
    spanBytes += bytes
    if (spanLocation[s] === SPAN_IN_USE) tailWaste += bytes - spanObjectCount[s]! * spanObjectSize[s]!
    for (let k = 0; k < STATES; k++) state[k]! += counts[s * STATES + k]! * spanObjectSize[s]!
  }
  return {state, tailWaste, spanBytes}
}

/** The heap model's spans as sorted ranges. */
function spanRanges(index: HeapIndex): OtherAllocatorInputs['spans'] {
  const {spanStart, spanPages, pageSize} = index
  return {count: spanStart.length, start: i => spanStart[i]!, end: i => spanStart[i]! + spanPages[i]! * pageSize}
}

/** One other allocator's line: its bytes in the writable segments, of those in the core file, its counters and parts. */
function otherAllocatorLine(o: OtherAllocatorHeap, segments: Segment[]): AccountLine {
  const mine = rangeBytesBySegment({count: o.ranges.length, start: i => o.ranges[i]!.start, end: i => o.ranges[i]!.end}, segments)
  let bytes = 0
  let inCore = 0
  for (const m of mine.values()) (bytes += m.bytes), (inCore += m.present)
  return {
    part: `${o.allocator} (memory that bypassed the heap's allocator)`,
    bytes,
    inCore,
    ...(o.counters.length ? {allocator: {property: o.counters.map(c => c.property).join(' + '), bytes: o.counters.reduce((n, c) => n + c.bytes, 0)}} : {}),
    note: `${o.foundAt}${o.notes.length ? `; ${o.notes.join('; ')}` : ''}`,
    parts: o.parts.map(p => ({part: p.part, bytes: p.bytes, note: `${p.blocks} chunks${p.note ? `, ${p.note}` : ''}`})),
  }
}

/** Each writable segment's bytes of the ranges (sorted, apart), and of those the bytes the core file holds (both walks sorted: one pass). */
function rangeBytesBySegment(ranges: OtherAllocatorInputs['spans'], segments: Segment[]) {
  const out = new Map<number, {bytes: number; present: number}>()
  let k = 0
  for (let s = 0; s < ranges.count; s++) {
    const start = ranges.start(s)
    const end = ranges.end(s)
    while (k < segments.length && segments[k]!.end <= start) k++
    for (let j = k; j < segments.length && segments[j]!.start < end; j++) {
      const seg = segments[j]!
      const part = Math.min(end, seg.end) - Math.max(start, seg.start)
      if (part <= 0) continue
      const presentEnd = seg.start + seg.presentSize
      const inFile = Math.max(0, Math.min(end, presentEnd) - Math.max(start, seg.start))
      const e = out.get(seg.start) ?? {bytes: 0, present: 0}
      e.bytes += part
      e.present += inFile
      out.set(seg.start, e)
    }
  }
  return out
}
