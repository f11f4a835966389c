import type {AddressSpace} from '../core/address-space.js'
import type {Layout} from './layout.js'
import {u64le} from '../util/u64le.js'

/** TCMalloc's size classes as the process computed them at start-up (never a built-in table). */
export interface SizeClasses {
  /** Number of classes including the unused class 0. */
  count: number
  size: Float64Array
  pages: Float64Array
  objectsToMove: Int32Array
}

const MAX_CLASSES = 256

/** Reads the size map at addr, or returns why it does not look like one. */
export function readSizeMap(memory: AddressSpace, addr: number, layout: Layout): SizeClasses | string {
  const sm = layout.sizeMap
  let count = sm.arrayLength
  if (sm.numSizeClasses !== null) {
    const n = memory.readU64(addr + sm.numSizeClasses)
    if (n === undefined) return `size map at 0x${addr.toString(16)} is not in the core`
    if (n < 2 || n > sm.arrayLength || n > MAX_CLASSES) return `num_size_classes ${n} out of range`
    count = n
  }
  const w = sm.classToSizeWidth
  const sizes = memory.readBytes(addr + sm.classToSize, count * w)
  const pages = memory.readBytes(addr + sm.classToPages, count * 8)
  const move = memory.readBytes(addr + sm.numObjectsToMove, count * 4)
  if (!sizes || !pages || !move) return `size map at 0x${addr.toString(16)} is not in the core`
  const result: SizeClasses = {count, size: new Float64Array(count), pages: new Float64Array(count), objectsToMove: new Int32Array(count)}
  for (let cl = 0; cl < count; cl++) {
    result.size[cl] = w === 4 ? sizes.readInt32LE(cl * 4) : u64le(sizes, cl * 8)
    result.pages[cl] = u64le(pages, cl * 8)
    result.objectsToMove[cl] = move.readInt32LE(cl * 4)
  }
  if (result.size[0] !== 0 || result.size[1] !== 8) return `class sizes do not start 0, 8`
  for (let cl = 1; cl < count; cl++) {
    if (cl > 1 && !(result.size[cl]! > result.size[cl - 1]!)) return `class ${cl} size ${result.size[cl]} does not increase`
    if (result.size[cl]! % 8 !== 0) return `class ${cl} size ${result.size[cl]} not a multiple of 8`
    if (!(result.pages[cl]! >= 1 && result.pages[cl]! <= 1024)) return `class ${cl} pages ${result.pages[cl]} out of range`
    if (!(result.objectsToMove[cl]! >= 1 && result.objectsToMove[cl]! <= 32768)) return `class ${cl} batch ${result.objectsToMove[cl]} out of range`
  }
  return result
}
