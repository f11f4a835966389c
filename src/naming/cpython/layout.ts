/**
 * CPython's object layouts on x86-64 (Include/object.h, Include/cpython/object.h,
 * Include/internal/pycore_object.h, pycore_dict.h, Objects/dictobject.c, Include/cpython/
 * {listobject,setobject,bytearrayobject,unicodeobject,longintrepr}.h), for the versions they are
 * proven on: 3.11 (fixtures/pydemo: Debian bookworm's 3.11.2), 3.12 and 3.13 (fixtures/pydemo312,
 * pydemo313: 3.12.1 and 3.13.0 built by pyenv), default (GIL) builds. The constants below are the
 * fields all share; `CpythonLayout` holds what moved between them. Other versions are not covered
 * (the recogniser says so and stops).
 */

/** What differs between the versions covered. */
export interface CpythonLayout {
  minor: number
  /** PyHeapTypeObject.ht_cached_keys (3.12 grew PyTypeObject by tp_watched). */
  htCachedKeys: number
  /** tp_flags bits any of which puts two words before the GC header (3.12: managed weakrefs too). */
  preHeaderBits: readonly number[]
  /** Where a managed-dict instance keeps its values pointer, from the object (3.13: inside the object, no block). */
  managedValues: number | null
  /** 3.12's PyDictOrValues: the word is a dict, or values − 1 (odd). 3.11: the values pointer. */
  managedValuesTagged: boolean
  /**
   * A split dict's values block: 'prefix' (3.11, 3.12: the pointer is past a prefix whose last
   * byte is its size) or 'header' (3.13: {capacity, size, embedded, valid} then the values and an
   * order array, at the block's start; or embedded in an instance, no block).
   */
  dictValues: 'prefix' | 'header'

  /** sizeof(PyASCIIObject) and sizeof(PyCompactUnicodeObject) (3.12 dropped wstr), PyUnicodeObject.data. */
  asciiObjectBytes: number
  compactUnicodeObjectBytes: number
  unicodeData: number
  /** 3.12's int keeps lv_tag (digits × 8 + sign) where ob_size was. */
  longDigitsInTag: boolean
}

export const LAYOUT_311: CpythonLayout = {
  minor: 11,
  htCachedKeys: 872,
  preHeaderBits: [2 ** 4],
  managedValues: -32,
  managedValuesTagged: false,
  dictValues: 'prefix',
  asciiObjectBytes: 48,
  compactUnicodeObjectBytes: 72,
  unicodeData: 72,
  longDigitsInTag: false,
}

export const LAYOUT_312: CpythonLayout = {
  minor: 12,
  htCachedKeys: 880,
  preHeaderBits: [2 ** 3, 2 ** 4],
  managedValues: -24,
  managedValuesTagged: true,
  dictValues: 'prefix',
  asciiObjectBytes: 40,
  compactUnicodeObjectBytes: 56,
  unicodeData: 56,
  longDigitsInTag: true,
}

export const LAYOUT_313: CpythonLayout = {
  ...LAYOUT_312,
  minor: 13,
  managedValues: null,
  managedValuesTagged: false,
  dictValues: 'header',
}

/** The layout of a 3.x version, or undefined when not covered. */
export function layoutFor(major: number, minor: number): CpythonLayout | undefined {
  if (major !== 3) return undefined
  return [LAYOUT_311, LAYOUT_312, LAYOUT_313].find(l => l.minor === minor)
}

/** PyObject: ob_refcnt, ob_type. PyVarObject adds ob_size. */
export const OB_TYPE = 8
export const OB_SIZE = 16

/** PyTypeObject fields used (PyVarObject ob_base is 24 bytes). */
export const TP_NAME = 24
export const TP_BASICSIZE = 32
export const TP_ITEMSIZE = 40
export const TP_FLAGS = 168
export const TP_BASE = 256

/** tp_flags bits (Include/object.h). */
export const TPFLAGS_MANAGED_DICT = 2 ** 4
export const TPFLAGS_HEAPTYPE = 2 ** 9
export const TPFLAGS_READY = 2 ** 12
export const TPFLAGS_HAVE_GC = 2 ** 14
export const TPFLAGS_LONG_SUBCLASS = 2 ** 24
export const TPFLAGS_LIST_SUBCLASS = 2 ** 25
export const TPFLAGS_UNICODE_SUBCLASS = 2 ** 28
export const TPFLAGS_DICT_SUBCLASS = 2 ** 29
export const TPFLAGS_TYPE_SUBCLASS = 2 ** 31

/** PyGC_Head (two words) before a GC object; pre-header types put two more words before it. */
export const GC_HEAD_BYTES = 16
export const PRE_HEADER_BYTES = 16

/** PyListObject: ob_item, allocated. */
export const LIST_OB_ITEM = 24
export const LIST_ALLOCATED = 32

/** PyDictObject: ma_keys, ma_values. */
export const DICT_MA_KEYS = 32
export const DICT_MA_VALUES = 40

/** PyDictKeysObject: dk_refcnt, dk_log2_size, dk_log2_index_bytes, dk_kind, dk_version, dk_usable, dk_nentries, dk_indices. */
export const DK_LOG2_SIZE = 8
export const DK_LOG2_INDEX_BYTES = 9
export const DK_KIND = 10
export const DK_USABLE = 16
export const DK_NENTRIES = 24
export const DK_HEADER_BYTES = 32
/** dk_kind: DICT_KEYS_GENERAL entries are {hash, key, value}; UNICODE and SPLIT {key, value}. */
export const DICT_KEYS_GENERAL = 0
export const DICT_KEYS_SPLIT = 2
export const GENERAL_ENTRY_BYTES = 24
export const UNICODE_ENTRY_BYTES = 16

/** PySetObject: mask, table, smalltable (8 entries of {key, hash}). */
export const SET_MASK = 32
export const SET_TABLE = 40
export const SET_SMALLTABLE = 64
export const SET_ENTRY_BYTES = 16

/** PyByteArrayObject: ob_alloc, ob_bytes. */
export const BYTEARRAY_ALLOC = 24
export const BYTEARRAY_BYTES = 32

/** PyASCIIObject: length, hash, state (interned:2 kind:3 compact:1 ascii:1, then ready or statically_allocated). */
export const UNICODE_LENGTH = 16
export const UNICODE_STATE = 32
