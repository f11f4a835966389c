/**
 * The state of an object slot, one byte per slot (TOMA's SpanWrapper tags). These are the neutral
 * heap layer's states: the index stores them by these numbers and names, so neither may change.
 * They are named after gperftools TCMalloc's places because it was the first model; a second
 * allocator maps its own free places onto them (a per-CPU or transfer cache is TRANSFER_CACHE or
 * THREAD_CACHE, a free span PAGE_HEAP, memory given back to the system RETURNED), and the layer
 * grows a state only for a place none of these can stand for (a new number, a new name, appended).
 */
export const LIVE = 0
export const THREAD_CACHE = 1
export const CENTRAL_CACHE = 2
export const TRANSFER_CACHE = 3
export const PAGE_HEAP = 4
export const RETURNED = 5
export const STATE_NAMES = ['live', 'thread-cache', 'central-cache', 'transfer-cache', 'page-heap', 'returned'] as const
export type StateName = (typeof STATE_NAMES)[number]
