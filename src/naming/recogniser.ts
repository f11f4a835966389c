import type {Program} from '../program/program.js'
import type {HeapObjects} from '../heap/objects.js'
import type {TypeNamer} from '../graph/types.js'
import type {RootRange} from '../graph/roots.js'
import type {ObjectNames} from './object-names.js'

/**
 * What a recogniser may use: the process image, the heap's object slots and their states, the
 * vtable namer, the root ranges (owners on stacks and in globals), and the names given so far.
 * Everything read from `program.core.memory` is untrusted: check before use, bound every walk.
 */
export interface NamingContext {
  program: Program
  objects: HeapObjects
  /** The state byte of the slots that are live (compare `objects.state[slot] === live`). */
  live: number
  vtables: TypeNamer
  roots: readonly RootRange[]
  names: ObjectNames
  /**
   * Whether the allocator would have given a block of `blockSize` bytes (a slot's size) for a
   * request of `request` bytes: how a length or capacity read from an owner is proven to be the
   * one the block was allocated for.
   */
  fits(request: number, blockSize: number): boolean
  /** A finding worth a line in the report ("CPython 3.11: 41,210 objects named by ob_type"). */
  note(message: string): void
  /** Something inconsistent, with its address ("dict keys at 0x… claims 2^40 entries: not named"). */
  warn(message: string, address: number): void
}

/**
 * One way of naming objects. `applies` is cheap and says whether the program can hold such
 * objects at all (a CPython recogniser needs `PyType_Type`; a Lua one a Lua library or its
 * symbols); `run` names what it can prove, in `ctx.names`, and nothing it cannot.
 */
export interface Recogniser {
  /** Short, for notes and timings ("cpython", "lua", "std-layout", "dwarf", "pool", "c-string"). */
  readonly label: string
  /** The via code its names carry (via.ts). */
  readonly via: number
  applies(ctx: NamingContext): boolean
  run(ctx: NamingContext): void
}
