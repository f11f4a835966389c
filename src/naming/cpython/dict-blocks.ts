import type {AddressSpace} from '../../core/address-space.js'
import {
  DICT_KEYS_GENERAL, DICT_KEYS_SPLIT, DK_HEADER_BYTES, DK_KIND, DK_LOG2_INDEX_BYTES, DK_LOG2_SIZE, DK_NENTRIES, DK_USABLE,
  GENERAL_ENTRY_BYTES, UNICODE_ENTRY_BYTES,
} from './layout.js'

/** The size of the live block starting exactly at an address, or null. */
export type LiveBlockSize = (address: number) => number | null

export interface DictKeys {
  kind: number
}

/** dk_log2_index_bytes as new_keys_object (Objects/dictobject.c) derives it from dk_log2_size. */
function indexBytesLog2(log2Size: number): number {
  if (log2Size < 8) return log2Size
  if (log2Size < 16) return log2Size + 1
  if (log2Size < 32) return log2Size + 2
  return log2Size + 3
}

/**
 * A PyDictKeysObject in a live block of its own: a reference count, a table size whose index width
 * and entry array (USABLE_FRACTION = 2/3 of the slots, entries of its kind) fit the block, as
 * new_keys_object allocates it, and used + usable entries within that fraction. Null otherwise
 * (Py_EMPTY_KEYS, static, is in no block).
 */
export function dictKeysAt(memory: AddressSpace, blockSize: LiveBlockSize, keys: number): DictKeys | null {
  const size = blockSize(keys)
  if (size === null) return null
  const refcnt = memory.readU64(keys)
  const log2 = memory.readU8(keys + DK_LOG2_SIZE)
  const log2Index = memory.readU8(keys + DK_LOG2_INDEX_BYTES)
  const kind = memory.readU8(keys + DK_KIND)
  const usable = memory.readU64(keys + DK_USABLE)
  const nentries = memory.readU64(keys + DK_NENTRIES)
  if (refcnt === undefined || log2 === undefined || log2Index === undefined || kind === undefined || usable === undefined || nentries === undefined) return null
  if (refcnt < 1 || log2 < 3 || log2 > 40 || log2Index !== indexBytesLog2(log2) || kind > DICT_KEYS_SPLIT) return null
  const capacity = Math.floor((2 ** log2 * 2) / 3)
  if (usable + nentries > capacity) return null
  const entry = kind === DICT_KEYS_GENERAL ? GENERAL_ENTRY_BYTES : UNICODE_ENTRY_BYTES
  if (DK_HEADER_BYTES + 2 ** log2Index + entry * capacity > size) return null
  return {kind}
}

/**
 * The block of a split table's values array (PyDictValues, new_values in dictobject.c), for an
 * owner whose keys are a split table: the pointer is past a prefix whose last byte is the
 * prefix's size, round_up(n + 2, 8) for the n values it was made for (shared keys change after, so
 * n is not theirs now), and the block holds that prefix and at least the fewest values such a
 * prefix means; the byte before it, the values in use, is at most n. Null otherwise.
 */
export function dictValuesBlock(memory: AddressSpace, blockSize: LiveBlockSize, values: number, keys: DictKeys | null): number | null {
  if (!keys || keys.kind !== DICT_KEYS_SPLIT || values % 8 !== 0) return null
  const prefix = memory.readU8(values - 1)
  const used = memory.readU8(values - 2)
  if (prefix === undefined || used === undefined || prefix < 8 || prefix % 8 !== 0 || used > prefix - 2) return null
  const start = values - prefix
  const size = blockSize(start)
  if (size === null || prefix + 8 * Math.max(1, prefix - 9) > size) return null
  return start
}

/**
 * 3.13's values block (new_values in dictobject.c): {capacity, size, embedded = 0, valid} at the
 * block's start, then capacity values and an order array of capacity bytes rounded up to a word.
 * Values embedded in an instance (embedded = 1) are no block: null.
 */
export function dictValuesHeaderBlock(memory: AddressSpace, blockSize: LiveBlockSize, values: number, keys: DictKeys | null): number | null {
  if (!keys || keys.kind !== DICT_KEYS_SPLIT) return null
  const size = blockSize(values)
  const capacity = memory.readU8(values)
  const used = memory.readU8(values + 1)
  const embedded = memory.readU8(values + 2)
  if (size === null || capacity === undefined || used === undefined || embedded !== 0 || capacity < 1 || used > capacity) return null
  return (capacity + 1) * 8 + Math.ceil(capacity / 8) * 8 <= size ? values : null
}
