import type {Program} from '../program/program.js'
import type {AllocatorGlobals} from './globals.js'

/*
 * Where Static's hidden members lie when their symbols are not exported (2.5.90 on), relative to a
 * global the model has found. Every position is validated by its reader (a PageHeapAllocator's
 * fields, the sampled list against the spans' sample bits) and a warning says when it fails.
 * - x86-64 (2.0 .. 2.18.1 autotools builds and Debian 2.10, gperftools-layouts.md §9.3/§9.5):
 *   sampled_objects_, stacktrace_allocator_ and span_allocator_ at −0x80, −0x40 and −0x20 from
 *   central_cache_.
 * - aarch64 (Debian 12's arm64 2.10, docs/AARCH64.md): the three sit right before pageheap_
 *   instead: span_allocator_ −0x70, stacktrace_allocator_ −0x50 (32 bytes each), sampled_objects_
 *   −0x30 (a 48-byte Span, ending at pageheap_). The allocators' free_avail_ and inuse_ equal the
 *   x86-64 core's of the same program; the list head is the one the sampled spans' next links
 *   close on (fixtures/arm64/heapdemo-2.10-sampled).
 */
export type StaticMember = 'span_allocator_' | 'stacktrace_allocator_' | 'sampled_objects_'

const BEFORE_CENTRAL_X86_64: Record<StaticMember, number> = {span_allocator_: 0x20, stacktrace_allocator_: 0x40, sampled_objects_: 0x80}
const BEFORE_PAGEHEAP_AARCH64: Record<StaticMember, number> = {span_allocator_: 0x70, stacktrace_allocator_: 0x50, sampled_objects_: 0x30}

/** The member's address by position, and how it was found (for warnings and `how` lines). */
export function staticMemberByPosition(program: Program, globals: AllocatorGlobals, member: StaticMember): {at: number; how: string} {
  return program.core.arch.name === 'aarch64'
    ? {at: globals.pageHeap - BEFORE_PAGEHEAP_AARCH64[member], how: 'position before pageheap_ (Debian arm64)'}
    : {at: globals.centralCache - BEFORE_CENTRAL_X86_64[member], how: 'position before central_cache_'}
}
