import type {AddressSpace} from '../core/address-space.js'
import type {HeapIndex} from '../index/heap-index.js'

/** A printable C string at addr (at least 4 characters), else null. */
export function cString(memory: AddressSpace, addr: number, max = 256): string | null {
  const buf = memory.readBytes(addr, max) ?? memory.readBytes(addr, 16)
  if (!buf) return null
  let n = 0
  while (n < buf.length && buf[n]! >= 0x20 && buf[n]! < 0x7f) n++
  if (n < 4 || (n < buf.length && buf[n] !== 0)) return null
  return buf.toString('latin1', 0, n)
}

/**
 * If a live object is the heap buffer of a libstdc++ std::string (`{char* p; size_t n; union
 * {size_t capacity; char local[16]}}` with p pointing at the buffer), the owner and the text.
 */
export function stdStringOwner(memory: AddressSpace, index: HeapIndex, objectIndex: number, start: number, size: number) {
  for (const e of index.inEdges(objectIndex, 64)) {
    if (e.toOffset !== 0) continue
    const owner = index.object(e.from)
    const at = owner.start + e.offset
    const length = memory.readU64(at + 8)
    const capacity = memory.readU64(at + 16)
    if (length === undefined || capacity === undefined) continue
    // Long strings have capacity ≥ 16 (shorter ones live in the local buffer) and a NUL at p[n].
    if (capacity < 16 || length > capacity || capacity + 1 > size) continue
    if (memory.readU8(start + length) !== 0) continue
    const text = memory.readBytes(start, Math.min(length, 256))
    if (!text) continue
    return {owner: owner.start, offset: e.offset, length, capacity, text: text.toString('latin1')}
  }
  return null
}
