import {sizeOf, stripAliases, type DwarfType, type StructType} from '../../elf/dwarf/types.js'
import type {NamingContext} from '../recogniser.js'
import {SlotFinder} from '../slot-finder.js'
import {DwarfClaims, type Offer} from './claims.js'
import {MAX_ELEMENTS, type ContainerFlow} from './container-flow.js'
import {containerOf, stringBuffers, type Container} from './std-containers.js'
import {provenCount, scalarPointee, ScalarPointees} from './scalar-pointees.js'
import {SlotRounds} from './slot-rounds.js'
import {isStdInternal, ScanPlans} from './scan-plan.js'

/** Values taken from the work list, at most (a bound on any heap). */
const MAX_STEPS = 20_000_000
/** Types built inside one another deeper than this (types.ts builds no deeper) are damage. */
const MAX_TYPE_DEPTH = 1000

/**
 * Types flowing from typed roots through typed pointers. A value of a known type at an address
 * (a global, a local, a heap object) is scanned: each pointer member whose pointee is a struct
 * names the heap block it points to, when it points to the block's start and the type fits in the
 * block, and that block is then scanned as that type (once per block and type). A pointer into a
 * block's inside is followed but names nothing. A struct pointer whose block's size proves an
 * array of n > 1 of them (`provenCount`) names `T[n]`, and each element is scanned. Pointers to
 * scalars (`char*`, `long*`) offer their blocks names settled after the flow (scalar-pointees.ts).
 * Standard containers (std-containers.ts) name their
 * bodies and nodes and pass their element type on. Types from the `std::` namespace that are not
 * containers are followed but never name a block: their pointers are links (`_Rb_tree_node_base*`),
 * not the type of what they reach.
 */
export class TypeFlow implements ContainerFlow {
  readonly claims: DwarfClaims
  readonly scalars: ScalarPointees
  /** The work list: addresses, the type each is scanned as, and the slot each lies in. */
  private readonly work = new SlotRounds<DwarfType>()
  /** The std::string ends a round met, and their buffers' starts, read after it (stringBuffers). */
  private readonly stringEnds = new SlotRounds<number>()
  private readonly byte = Buffer.alloc(1)
  /**
   * The types each block was scanned as at its start: the first one's id (1 + its index in
   * `typeNames`) by slot, any more in `seen`, as are the types met inside a block (by address).
   * A Set per block scanned (two million on workloaddemo's timing core) cost seconds of garbage
   * collection.
   */
  private readonly firstAtStart: Uint32Array
  private readonly typeIds = new Map<string, number>()
  private readonly seen = new Map<number, Set<string>>()
  private readonly pointerful = new WeakMap<DwarfType, boolean>()
  private readonly plans = new ScanPlans(t => this.hasPointers(t))
  private readonly offers = new WeakMap<StructType, Offer>()
  /** The block `live` found last (a table of the heap's pages: no object per lookup, two million of them). */
  readonly block: SlotFinder
  steps = 0
  interior = 0
  tooSmall = 0
  cut = false

  constructor(
    readonly ctx: NamingContext,
    structNamed: (name: string) => StructType | undefined,
  ) {
    this.claims = new DwarfClaims(ctx.names, structNamed)
    this.scalars = new ScalarPointees(ctx)
    this.firstAtStart = new Uint32Array(ctx.names.slots)
    this.block = new SlotFinder(ctx.objects)
  }

  /** A typed value outside the heap (a root): scanned now. */
  root(addr: number, type: DwarfType): void {
    if (this.hasPointers(type)) this.scan(addr, type, 0)
  }

  /** Scans what the roots reached, block by block. */
  run(): void {
    const take = (addr: number, type: DwarfType, count: number): boolean => {
      if (++this.steps > MAX_STEPS) return false
      const size = count > 1 ? sizeOf(type) : 0
      for (let i = 0; i < count; i++) this.scan(addr + i * size, type, 0)
      return true
    }
    // The roots' strings too, before the first round.
    stringBuffers(this, this.stringEnds, this.byte)
    while (this.work.pending > 0) {
      const done = this.work.round(take)
      stringBuffers(this, this.stringEnds, this.byte)
      if (!done) {
        this.cut = true
        return
      }
    }
  }

  endsString(nulAt: number, slot: number, start: number): void {
    this.stringEnds.push(nulAt, start, slot)
  }

  /** Scans `count` values of `type` from `addr` on, in the heap block `slot`, in a later round (in address order). */
  later(addr: number, type: DwarfType, slot: number, count = 1): void {
    this.work.push(addr, type, slot, count)
  }

  /** The value of `type` at `addr`, nested `depth` structs deep: its pointers followed (scan-plan.ts). */
  scan(addr: number, type: DwarfType, depth: number): void {
    const memory = this.ctx.program.core.memory
    for (const step of this.plans.of(type, depth)) {
      if (step.target !== null) {
        const word = memory.readU64(addr + step.at)
        if (word) this.pointee(word, step.target)
      } else if (step.container !== null) step.container(this, addr + step.at, step.type)
      else for (let i = 0; i < step.count; i++) this.scan(addr + step.at + i * step.size, step.element, step.depth)
    }
  }

  /** A pointer of type `target*` holding `ptr`. */
  pointee(ptr: number, target: DwarfType): void {
    const t = stripAliases(target)
    if (t.kind !== 'struct') {
      if (scalarPointee(t) && this.live(ptr) && this.block.start === ptr) this.scalars.offer(this.block, t)
      return
    }
    if (!this.live(ptr)) return
    const {index, start, size: blockSize} = this.block
    const size = t.size
    if (ptr !== start) {
      if (ptr + size > start + blockSize) return
      this.interior++
      this.enqueue(ptr, t, index, false)
      return
    }
    if (size > blockSize) {
      this.tooSmall++
      return
    }
    // An array's count, where the block proves it (never for a polymorphic type: new T[n] of
    // one puts a count before the first element, so its pointer is not the block's start).
    const n = !t.polymorphic && size > 0 && size * 2 <= blockSize ? provenCount(this.ctx, size, blockSize) : undefined
    const array = n !== undefined && n > 1 ? n : 1
    if (!isStdInternal(t.name) && !this.claims.claim(index, start, array > 1 ? {name: `${t.name}[${array}]`, kind: 'object', struct: t, element: t.name} : this.offerOf(t))) return
    for (let i = 1; i < Math.min(array, MAX_ELEMENTS); i++) this.enqueue(ptr + i * size, t, index, false)
    const dynamic = t.polymorphic ? this.claims.dynamicType(index) : undefined
    this.enqueue(ptr, dynamic && dynamic.size <= blockSize ? dynamic : t, index, true)
  }

  /** A block of one `t`, offered once per type (an object per block reached was garbage by the million). */
  private offerOf(t: StructType): Offer {
    let offer = this.offers.get(t)
    if (!offer) this.offers.set(t, (offer = {name: t.name, kind: 'object', struct: t, element: null}))
    return offer
  }

  /** Whether a live heap block holds `addr`: then `block` is that block (until the next call). */
  live(addr: number): boolean {
    return this.block.find(addr) && this.ctx.objects.state[this.block.index] === this.ctx.live
  }

  /** Scans a heap value later, once per address and type; `slot`: the block holding `addr`, `atStart` where `addr` is its start. */
  enqueue(addr: number, t: StructType, slot: number, atStart: boolean): void {
    if (!this.hasPointers(t)) return
    if (atStart) {
      let id = this.typeIds.get(t.name)
      if (id === undefined) this.typeIds.set(t.name, (id = this.typeIds.size + 1))
      const first = this.firstAtStart[slot]!
      if (first === 0) {
        this.firstAtStart[slot] = id
        this.later(addr, t, slot)
        return
      }
      if (first === id) return
    }
    let types = this.seen.get(addr)
    if (!types) this.seen.set(addr, (types = new Set()))
    if (types.has(t.name)) return
    types.add(t.name)
    this.later(addr, t, slot)
  }

  /** Whether a value of this type can hold a pointer this flow follows. */
  hasPointers(type: DwarfType, depth = 0): boolean {
    const t = stripAliases(type)
    const known = this.pointerful.get(t)
    if (known !== undefined) return known
    // A chain of nested types this deep is damage: not followed.
    if (depth > MAX_TYPE_DEPTH) return false
    // Assumed false while being worked out: a type that holds only pointers to itself is still
    // found pointerful through its pointer member.
    this.pointerful.set(t, false)
    let result = false
    if (t.kind === 'pointer') result = t.target !== null && (stripAliases(t.target).kind === 'struct' || scalarPointee(t.target) !== undefined)
    else if (t.kind === 'array') result = this.hasPointers(t.element, depth + 1)
    else if (t.kind === 'struct') result = !t.union && (containerOf(t) !== null || t.bases.some(b => this.hasPointers(b.type, depth + 1)) || t.members.some(m => this.hasPointers(m.type, depth + 1)))
    this.pointerful.set(t, result)
    return result
  }
}

export type {Container}
