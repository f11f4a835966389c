import {stripAliases, type DwarfType} from '../../elf/dwarf/types.js'
import {readsAsCString} from '../c-string.js'
import {BYTE_TYPES} from '../byte-blocks.js'
import {readSorted} from './sorted-read.js'
import type {NamingContext} from '../recogniser.js'
import type {DwarfClaims} from './claims.js'

/** Largest byte buffer read to see whether it is a C string (c-string.ts tests no larger block). */
const MAX_TEXT_READ = 1 << 16
/** Bytes of a block read first for its text test. */
const TEXT_HEAD = 256

/** Whether buf[0, n) holds a byte textLength stops at: a NUL, or a byte that is no text. */
function stopsTextWithin(buf: Uint8Array, n: number): boolean {
  for (let i = 0; i < n; i++) {
    const c = buf[i]!
    if (c === 0 || !((c >= 0x20 && c < 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d)) return true
  }
  return false
}

/**
 * The count of `size`-byte elements an array filling a block of `blockSize` holds, when exactly one
 * count n makes a request (n · size) the allocator serves with a block of that size; else
 * undefined. The request is not in the core: a block of one size class serves every request
 * between the class below and its own, so `new double[60]` in a 512-byte block could as well be
 * 57 to 64 doubles, and a count is proven only where the class's range holds one multiple.
 */
export function provenCount(ctx: Pick<NamingContext, 'fits'>, size: number, blockSize: number): number | undefined {
  if (!(size > 0)) return undefined
  let found: number | undefined
  for (let n = Math.floor(blockSize / size); n >= 1 && ctx.fits(n * size, blockSize); n--) {
    if (found !== undefined) return undefined
    found = n
  }
  return found
}

/** The element type a pointer of this pointee type names a block by, when it is a scalar: its name and size. */
export function scalarPointee(target: DwarfType): {name: string; size: number; bytes: boolean} | undefined {
  const t = stripAliases(target)
  if (t.kind === 'base') return t.size > 0 ? {name: t.name, size: t.size, bytes: BYTE_TYPES.has(t.name)} : undefined
  if (t.kind === 'pointer') return {name: t.name, size: 8, bytes: false}
  return undefined
}

/**
 * Names from pointers to scalars (`char*`, `long*`, `Item**`) at a live block's start: a byte type's
 * block is `char[]` (`unsigned char[]`, `std::byte[]`: the pointee's own type) whatever its length;
 * another scalar's is `T` or `T[n]` only where the block's size proves n (`provenCount`). A pointer
 * into a block's inside, or to `void`, names nothing.
 *
 * These are the weakest of the DWARF tier's names (a `char*` may point at a struct whose first
 * member is a char array), so they are offered during the flow and settled after it: a block the
 * flow typed as a struct, or another tier named, keeps that name; a block offered two scalar names
 * gets neither; a byte buffer that reads as a C string is left to the content tier, whose name
 * says more.
 */
export class ScalarPointees {
  /** Per slot: 1 + the index in `offered` of the block's offer (0: none). */
  private readonly offerOf: Uint32Array
  /** The blocks offered names, in the order first offered: each one's start, size and name (1 + its index in `offerNames`; 0 once two names were offered). */
  private readonly offered: {slot: number[]; start: number[]; size: number[]; name: number[]} = {slot: [], start: [], size: [], name: []}
  private readonly offerNames: Array<{name: string; bytes: boolean}> = []
  private readonly offerNameIds = new Map<string, number>()
  /** The name id of a pointee type that is bytes (`char`: `char[]`), by type. */
  private readonly bytesIds = new WeakMap<DwarfType, number>()

  constructor(private readonly ctx: NamingContext) {
    this.offerOf = new Uint32Array(ctx.names.slots)
  }

  /** A pointer to `target` holding the start of the live block `ref`. */
  offer(ref: {index: number; start: number; size: number}, target: DwarfType): void {
    // A byte type's name is the same whatever the block: its id is kept by type (a string built
    // and looked up per offer was garbage by the hundred thousand).
    let id = this.bytesIds.get(target)
    if (id === undefined) {
      const scalar = scalarPointee(target)
      if (!scalar) return
      if (scalar.bytes) this.bytesIds.set(target, (id = this.nameId(`${scalar.name}[]`, true)))
      else {
        const n = provenCount(this.ctx, scalar.size, ref.size)
        if (n === undefined) return
        id = this.nameId(n === 1 ? scalar.name : `${scalar.name}[${n}]`, false)
      }
    }
    const o = this.offered
    const at = this.offerOf[ref.index]!
    if (at === 0) {
      o.slot.push(ref.index)
      o.start.push(ref.start)
      o.size.push(ref.size)
      o.name.push(id)
      this.offerOf[ref.index] = o.slot.length
    } else if (o.name[at - 1] !== id) o.name[at - 1] = 0
  }

  /** 1 + the index of `name` in offerNames (added the first time). */
  private nameId(name: string, bytes: boolean): number {
    let id = this.offerNameIds.get(name)
    if (id === undefined) {
      this.offerNames.push({name, bytes})
      this.offerNameIds.set(name, (id = this.offerNames.length))
    }
    return id
  }

  /** Names the blocks offered one name, unnamed still and not claimed by the flow. Returns how many. */
  settle(claims: DwarfClaims): number {
    let named = 0
    // In address order: the byte buffers' text test reads each block, and the flow offered them in
    // the order pointers led to them; read in that order, a core of 400,000 buffers took one read
    // of the file per buffer (4.9 s of 30 in the naming worker, workloaddemo's timing core).
    const {slot: slots, start: starts, size: sizes, name: nameIds} = this.offered
    // Slots are numbered in address order, and each is offered once: their own numeric sort (a
    // comparator over the offers' starts took 0.7 s for 400,000).
    const order = Uint32Array.from(slots).sort()
    const entry = (k: number) => this.offerOf[order[k]!]! - 1
    for (let k = 0; k < order.length; k++) {
      const i = entry(k)
      const slot = slots[i]!
      const id = nameIds[i]!
      if (id === 0 || this.ctx.names.nameOf(slot) !== null || claims.has(slot)) continue
      const {name, bytes} = this.offerNames[id - 1]!
      if (bytes && this.readsAsCString(starts[i]!, sizes[i]!, k + 1 < order.length ? starts[entry(k + 1)]! : Infinity)) continue
      if (claims.claim(slot, starts[i]!, {name, kind: 'object', struct: null, element: null})) named++
    }
    return named
  }

  /** Where the blocks are read: one buffer for all (a Buffer per block was 400,000 of them, up to 64 KiB each). */
  private readonly scratch = Buffer.allocUnsafe(MAX_TEXT_READ)

  /** `next`: the start of the block offered after this one (its head is read next, maybe from the same read). */
  private readsAsCString(start: number, size: number, next: number): boolean {
    if (size > MAX_TEXT_READ) return false
    const memory = this.ctx.program.core.memory
    if (!memory.isReadable(start, size)) return false
    // The first bytes decide for most blocks (textLength stops at the NUL or at a byte that is no
    // text): the rest is read only when they do not.
    const head = Math.min(size, TEXT_HEAD)
    if (!readSorted(memory, start, head, this.scratch, next)) return false
    if (!stopsTextWithin(this.scratch, head) && !memory.readInto(start, size, this.scratch)) return false
    return readsAsCString(this.ctx, this.scratch, 0, size)
  }
}
