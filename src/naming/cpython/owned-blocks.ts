import type {AddressSpace} from '../../core/address-space.js'
import {dictKeysAt, dictValuesBlock, dictValuesHeaderBlock, type LiveBlockSize} from './dict-blocks.js'
import {hasFlag} from './flags.js'
import type {BlockObject} from './object-in-block.js'
import {unicodeState} from './object-size.js'
import type {PyTypes} from './type-objects.js'
import {
  BYTEARRAY_ALLOC, BYTEARRAY_BYTES, DICT_MA_KEYS, DICT_MA_VALUES, LIST_ALLOCATED, LIST_OB_ITEM, OB_SIZE, SET_ENTRY_BYTES,
  SET_MASK, SET_SMALLTABLE, SET_TABLE, TP_FLAGS, TPFLAGS_DICT_SUBCLASS, TPFLAGS_HEAPTYPE, TPFLAGS_LIST_SUBCLASS,
  TPFLAGS_MANAGED_DICT, TPFLAGS_TYPE_SUBCLASS, TPFLAGS_UNICODE_SUBCLASS, type CpythonLayout,
} from './layout.js'

/** The static types whose instances own blocks by layout, not by a tp_flags bit. */
export interface StorageTypes {
  set: number | undefined
  frozenset: number | undefined
  bytearray: number | undefined
}

export type Claim = (address: number, name: string) => void

/** Counts above this are not counts. */
const MAX_COUNT = 2 ** 40

/**
 * Claims the blocks a proven object owns, each only when the object's pointer is to the start of
 * a live block whose size holds what the object says it allocated: a list's ob_item (allocated
 * words), a dict's keys and split values, an instance's managed values (its type's shared keys
 * give their count), a heap type's shared keys, a set's table (mask + 1 entries, when not its
 * small table), a bytearray's buffer (ob_alloc bytes), a non-compact str's characters.
 */
export function ownedBlocks(memory: AddressSpace, layout: CpythonLayout, types: PyTypes, storageTypes: StorageTypes, blockSize: LiveBlockSize, o: BlockObject, claim: Claim): void {
  const obj = o.address
  const t = o.type
  const word = (at: number) => memory.readU64(at)
  if (hasFlag(t.flags, TPFLAGS_LIST_SUBCLASS)) {
    const items = word(obj + LIST_OB_ITEM)
    const allocated = word(obj + LIST_ALLOCATED)
    const n = word(obj + OB_SIZE)
    if (items && allocated !== undefined && n !== undefined && n <= allocated && allocated <= MAX_COUNT) {
      const size = blockSize(items)
      if (size !== null && allocated * 8 <= size) claim(items, 'python:list items')
    }
  }
  if (hasFlag(t.flags, TPFLAGS_DICT_SUBCLASS)) {
    const keysAt = word(obj + DICT_MA_KEYS)
    const keys = keysAt ? dictKeysAt(memory, blockSize, keysAt) : null
    if (keys && keysAt) claim(keysAt, 'python:dict keys')
    const values = word(obj + DICT_MA_VALUES)
    const block = !values ? null : layout.dictValues === 'prefix' ? dictValuesBlock(memory, blockSize, values, keys) : dictValuesHeaderBlock(memory, blockSize, values, keys)
    if (block !== null) claim(block, 'python:dict values')
  }
  if (hasFlag(t.flags, TPFLAGS_MANAGED_DICT) && layout.managedValues !== null) {
    // 3.11: the values pointer is the block's first word, before the managed dict pointer and the
    // GC header. 3.12: one word before the GC header is the dict, or the values pointer − 1.
    const raw = word(obj + layout.managedValues)
    const values = !layout.managedValuesTagged ? raw : raw !== undefined && raw % 2 === 1 ? raw + 1 : undefined
    const keysAt = word(t.address + layout.htCachedKeys)
    if (values && keysAt && hasFlag(t.flags, TPFLAGS_HEAPTYPE)) {
      const block = dictValuesBlock(memory, blockSize, values, dictKeysAt(memory, blockSize, keysAt))
      if (block !== null) claim(block, 'python:dict values')
    }
  }
  if (hasFlag(t.flags, TPFLAGS_TYPE_SUBCLASS)) {
    // The object is itself a type: a heap type's instances share its cached keys.
    const flags = word(obj + TP_FLAGS)
    const keysAt = flags !== undefined && hasFlag(flags, TPFLAGS_HEAPTYPE) && types.at(obj) ? word(obj + layout.htCachedKeys) : undefined
    if (keysAt && dictKeysAt(memory, blockSize, keysAt)) claim(keysAt, 'python:dict keys')
  }
  if ((storageTypes.set !== undefined && types.isSubtype(t, storageTypes.set)) || (storageTypes.frozenset !== undefined && types.isSubtype(t, storageTypes.frozenset))) {
    const mask = word(obj + SET_MASK)
    const table = word(obj + SET_TABLE)
    if (mask !== undefined && table && table !== obj + SET_SMALLTABLE && mask < MAX_COUNT && isPowerOfTwo(mask + 1) && mask + 1 >= 8) {
      const size = blockSize(table)
      if (size !== null && (mask + 1) * SET_ENTRY_BYTES <= size) claim(table, 'python:set table')
    }
  }
  if (storageTypes.bytearray !== undefined && types.isSubtype(t, storageTypes.bytearray)) {
    const alloc = word(obj + BYTEARRAY_ALLOC)
    const bytes = word(obj + BYTEARRAY_BYTES)
    const n = word(obj + OB_SIZE)
    if (bytes && alloc !== undefined && n !== undefined && n < alloc && alloc <= MAX_COUNT) {
      const size = blockSize(bytes)
      if (size !== null && alloc <= size) claim(bytes, 'python:bytearray buffer')
    }
  }
  if (hasFlag(t.flags, TPFLAGS_UNICODE_SUBCLASS)) {
    const s = unicodeState(memory, obj)
    const data = s && !s.compact ? word(obj + layout.unicodeData) : undefined
    if (s && data) {
      const size = blockSize(data)
      if (size !== null && (s.length + 1) * s.kind <= size) claim(data, 'python:str data')
    }
  }
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && 2 ** Math.round(Math.log2(n)) === n
}
