import {hex} from '../errors.js'
import type {AddressSpace} from '../core/address-space.js'
import type {Program} from '../program/program.js'
import {GrowableF64} from '../util/growable.js'
import type {AllocatorModule, SampledAllocations} from '../heap/heap-model.js'
import type {AllocatorGlobals} from './globals.js'
import {SPAN} from './layout.js'
import {staticMemberByPosition} from './static-positions.js'
import {spanIndexAt} from '../heap/slot-table.js'
import {IN_USE, type SpanTable} from './spans.js'
import type {Warnings} from '../heap/warnings.js'
import {u64le} from '../util/u64le.js'

/*
 * The objects TCMalloc sampled (env TCMALLOC_SAMPLE_PARAMETER > 0), each with what its StackTrace
 * recorded when it was allocated (gperftools-layouts.md §11), as SampledAllocations (heap-model.ts):
 * requestedSize is StackTrace.size; pc the return addresses as GetStackTrace stored them (the first
 * inside the allocator's entry point); order the order GetHeapSample lists them: oldest first, the
 * reverse of sampled_objects_ (DLL_Prepend puts a new span first; the stack-trace table prepends
 * again), address order when the list could not be walked; period FLAGS_tcmalloc_sample_parameter,
 * null when its symbol is not known.
 */

/** StackTrace {uintptr_t size @0; uintptr_t depth @8; void* stack[kMaxStackDepth] @16}: 264 bytes in every version. */
export const STACK_TRACE = {size: 0, depth: 8, stack: 16, bytes: 264} as const
/** kMaxStackDepth, 31 in every gperftools 2.x. */
export const MAX_STACK_DEPTH = 31

const SYM = {
  sampledObjects: '_ZN8tcmalloc6Static16sampled_objects_E',
  samplePeriod: '_ZN61FLAG__namespace_do_not_use_directly_use_DECLARE_int64_instead31FLAGS_tcmalloc_sample_parameterE',
}
/** A sample period is a positive int64 below 2^58 (sampler.cc's limit). */
const MAX_PERIOD = 2 ** 58

export function noSamples(): SampledAllocations {
  return {span: new Uint32Array(0), requestedSize: new Float64Array(0), stackStart: new Uint32Array(1), pc: new Float64Array(0), order: new Uint32Array(0), period: null}
}

/**
 * Reads the StackTrace of every in-use span whose sample bit is set. A StackTrace is metadata:
 * its pointer must be 8-aligned, outside every span and readable; its depth at most
 * kMaxStackDepth; its size no more than the span holds. A span that fails keeps its object (it is
 * still allocated) but has no sample, with a warning naming the span record. The list
 * Static::sampled_objects_ must hold exactly these spans; when it does not, a warning says so.
 */
export function readSampledAllocations(
  program: Program,
  module: AllocatorModule,
  globals: AllocatorGlobals,
  spans: SpanTable,
  pageSize: number,
  warnings: Warnings,
): SampledAllocations {
  const memory = program.core.memory
  const sampledSpans: number[] = []
  for (let s = 0; s < spans.count; s++) if (spans.sampled[s] && spans.location[s] === IN_USE && spans.sizeClass[s] === 0) sampledSpans.push(s)
  const period = samplePeriod(program, module, memory)
  if (sampledSpans.length === 0) return {...noSamples(), period}

  const span: number[] = []
  const requestedSize: number[] = []
  const stackStart: number[] = [0]
  const pc = new GrowableF64()
  const trace = Buffer.alloc(STACK_TRACE.bytes)
  const u64 = (off: number) => u64le(trace, off)
  for (const s of sampledSpans) {
    const at = spans.freeHead[s]!
    const bytes = spans.pages[s]! * pageSize
    const where = `sampled span ${hex(spans.record[s]!)} at ${hex(spans.start[s]!)}`
    let problem = ''
    if (at === 0 || at % 8 !== 0) problem = `its StackTrace pointer ${hex(at)} is not a record's address`
    else if (spanIndexAt(spans, pageSize, at) >= 0) problem = `its StackTrace pointer ${hex(at)} points into the heap, not TCMalloc's metadata`
    else if (!memory.readInto(at, STACK_TRACE.bytes, trace)) problem = `its StackTrace at ${hex(at)} is not in the core`
    else if (u64(STACK_TRACE.depth) > MAX_STACK_DEPTH) problem = `its StackTrace at ${hex(at)} has depth ${u64(STACK_TRACE.depth)}, more than ${MAX_STACK_DEPTH}`
    else if (u64(STACK_TRACE.size) > bytes) problem = `its StackTrace at ${hex(at)} says ${u64(STACK_TRACE.size)} bytes were asked for, more than the span's ${bytes}`
    if (problem) {
      warnings.add('sampled', `${where}: ${problem}; no allocation stack for its object`, spans.record[s]!)
      continue
    }
    span.push(s)
    requestedSize.push(u64(STACK_TRACE.size))
    const depth = u64(STACK_TRACE.depth)
    for (let d = 0; d < depth; d++) pc.push(u64(STACK_TRACE.stack + 8 * d))
    stackStart.push(pc.length)
  }
  const walked = walkSampledList(program, module, globals, memory, new Set(sampledSpans.map(s => spans.record[s]!)), warnings)
  const sampleOfRecord = new Map(span.map((s, i) => [spans.record[s]!, i]))
  const order = walked ? walked.reverse().flatMap(r => sampleOfRecord.get(r) ?? []) : span.map((_, i) => i)
  return {span: Uint32Array.from(span), requestedSize: Float64Array.from(requestedSize), stackStart: Uint32Array.from(stackStart), pc: pc.toArray(), order: Uint32Array.from(order), period}
}

function samplePeriod(program: Program, module: AllocatorModule, memory: AddressSpace): number | null {
  const at = program.symbolAddress(SYM.samplePeriod, [module.loaded])?.address
  if (at === undefined) return null
  const v = memory.readU64(at)
  return v !== undefined && v > 0 && v < MAX_PERIOD ? v : null
}

/**
 * The sampled_objects_ list (a dummy Span heading a circular list through next @16), checked
 * against the spans whose sample bit is set: their records in list order, or null (and a warning)
 * when the list is not exactly those spans.
 */
function walkSampledList(program: Program, module: AllocatorModule, globals: AllocatorGlobals, memory: AddressSpace, records: Set<number>, warnings: Warnings): number[] | null {
  const bySymbol = program.symbolAddress(SYM.sampledObjects, [module.loaded])?.address
  const byPosition = staticMemberByPosition(program, globals, 'sampled_objects_')
  const head = bySymbol ?? byPosition.at
  const name = `Static::sampled_objects_ at ${hex(head)} (${bySymbol === undefined ? byPosition.how : 'symbol'})`
  const seen: number[] = []
  let p = memory.readU64(head + SPAN.next)
  while (p !== head) {
    let problem = ''
    if (p === undefined) problem = 'leaves the core'
    else if (!records.has(p)) problem = `links ${hex(p)}, which is not an in-use span with its sample bit set`
    else if (seen.length >= records.size) problem = `is longer than the ${records.size} sampled spans (a loop)`
    if (problem) {
      warnings.add('sampled', `${name}: the list ${problem}; the sample bits of the spans were used`, head)
      return null
    }
    seen.push(p!)
    p = memory.readU64(p! + SPAN.next)
  }
  if (seen.length !== records.size) {
    warnings.add('sampled', `${name}: the list holds ${seen.length} spans, the page map has ${records.size} with the sample bit; the sample bits were used`, head)
    return null
  }
  return seen
}
