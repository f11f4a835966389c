import {hex} from '../errors.js'
import type {Recogniser} from './recogniser.js'
import {VIA_POOL, VIA_VTABLE} from './via.js'
import {u64le} from '../util/u64le.js'

/** Smallest block searched for a pool (smaller chunks are ordinary objects). */
const MIN_POOL = 4096
/** Largest block read whole. */
const MAX_POOL = 64 << 20
/** Fewest objects that make a pool. */
const MIN_OBJECTS = 3
/** Smallest stride: an object with a vtable pointer and at least one field. */
const MIN_STRIDE = 16
/** Pools described one by one in the notes (the rest are counted). */
const NOTED = 20

/**
 * Pools: large live blocks, unnamed or named by their first word's vtable, carved into objects of one class at a fixed stride (Qt's
 * event pool, arenas of nodes). Each 8-aligned word of the block is asked whether it is a primary
 * vtable pointer; the block is `pool of T` when at least three such words are found, all of one
 * class T, at offsets first + k × stride (stride = the greatest common divisor of their gaps, at
 * least 16 bytes). A block with vtable words of two classes, or at offsets no stride explains (an
 * object with a vtable-bearing member at another offset), is left unnamed: a wrong name is worse
 * than none. A vector of polymorphic objects has this shape too; the std-layout tier runs first
 * and names it from its owner.
 *
 * The interior objects are counted in the notes, not given slots of their own: the index has one
 * slot per allocator block. Exposing them further (find-object answering with the interior
 * object, `classes` counting them) needs interior rows beside the slots.
 */
export const pool: Recogniser = {
  label: 'pool',
  via: VIA_POOL,
  applies: () => true,
  run(ctx) {
    const memory = ctx.program.core.memory
    const typeOf = ctx.names.typeOf
    let pools = 0
    let interior = 0
    ctx.objects.forEachObject((id, start, size) => {
      if (size < MIN_POOL || size > MAX_POOL) return
      const vtableName = ctx.names.via[id] === VIA_VTABLE ? ctx.names.nameOf(id) : null
      if (typeOf[id] !== 0 && vtableName === null) return
      const bytes = memory.readBytes(start, size)
      if (!bytes) return
      const found = vtableWords(bytes, w => ctx.vtables.classOfVtablePointer(w))
      if (!found) return
      // A pool whose first slot holds an object has that object's vtable at its start, and the
      // vtable tier named the whole block after it: the pool's name replaces it, since one
      // object of T never holds further T objects at a stride (a class cannot contain itself).
      if (vtableName !== null) {
        if (vtableName !== found.type) return
        ctx.names.forget(id)
      }
      ctx.names.assign(id, `pool of ${found.type}`, 'pool', VIA_POOL, start)
      pools++
      interior += found.offsets.length
      if (pools <= NOTED) {
        ctx.note(`pool of ${found.type} at ${hex(start)} (${size} bytes): ${found.offsets.length} objects at stride ${found.stride}, the first at +${found.offsets[0]!}`)
      }
    }, ctx.live, MIN_POOL, MAX_POOL)
    if (pools > NOTED) ctx.note(`${pools - NOTED} more pools`)
    if (pools > 0) ctx.note(`${pools} pools hold ${interior} interior objects (counted here; the index keeps one slot per block)`)
  },
}

/** The vtable words of a block when they are one class at one stride; else null. */
export function vtableWords(bytes: Buffer, classOf: (word: number) => string | null): {type: string; stride: number; offsets: number[]} | null {
  const offsets: number[] = []
  let type: string | null = null
  for (let off = 0; off + 8 <= bytes.length; off += 8) {
    const low = bytes.readUInt32LE(off)
    if (low % 8 !== 0) continue
    const w = u64le(bytes, off)
    if (w === 0) continue
    const c = classOf(w)
    if (c === null) continue
    if (type !== null && c !== type) return null
    type = c
    offsets.push(off)
  }
  if (type === null || offsets.length < MIN_OBJECTS) return null
  let stride = 0
  for (let i = 1; i < offsets.length; i++) stride = gcd(stride, offsets[i]! - offsets[i - 1]!)
  if (stride < MIN_STRIDE) return null
  return {type, stride, offsets}
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b]
  return a
}
