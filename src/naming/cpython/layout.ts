/**
 * CPython 3.11's object layouts on x86-64 (Include/object.h, Include/cpython/object.h,
 * Include/internal/pycore_object.h, pycore_dict.h, Objects/dictobject.c, Include/cpython/
 * {listobject,setobject,bytearrayobject,unicodeobject}.h of 3.11), the only version these offsets
 * are proven on (fixtures/pydemo: Debian bookworm's 3.11.2). 3.12 keeps the object header and
 * PyTypeObject's first fields but adds managed weakrefs to the pre-header and immortal reference
 * counts; 3.13 moves instance values inline: not covered here (the recogniser says so and stops).
 */

/** PyObject: ob_refcnt, ob_type. PyVarObject adds ob_size. */
export const OB_TYPE = 8
export const OB_SIZE = 16

/** PyTypeObject fields used (PyVarObject ob_base is 24 bytes). */
export const TP_NAME = 24
export const TP_BASICSIZE = 32
export const TP_ITEMSIZE = 40
export const TP_FLAGS = 168
export const TP_BASE = 256
/** PyHeapTypeObject.ht_cached_keys (the instances' shared dict keys). */
export const HT_CACHED_KEYS = 872

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

/** PyGC_Head (two words) before a GC object; managed-dict types put two more words before it. */
export const GC_HEAD_BYTES = 16
export const MANAGED_DICT_BYTES = 16

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

/** PyASCIIObject: length, hash, state (interned:2 kind:3 compact:1 ascii:1 ready:1); sizes of the three structs. */
export const UNICODE_LENGTH = 16
export const UNICODE_STATE = 32
export const ASCII_OBJECT_BYTES = 48
export const COMPACT_UNICODE_OBJECT_BYTES = 72
/** PyUnicodeObject.data (a non-compact str: a subclass's instance, its characters in their own block). */
export const UNICODE_DATA = 72
