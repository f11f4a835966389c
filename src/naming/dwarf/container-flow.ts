import type {DwarfType} from '../../elf/dwarf/types.js'
import type {NamingContext} from '../recogniser.js'
import type {DwarfClaims} from './claims.js'

/**
 * What a standard container's reader (std-containers.ts) needs of the type flow that calls it
 * (type-flow.ts implements it): declared apart so that the containers do not import the flow.
 */
export interface ContainerFlow {
  readonly ctx: NamingContext
  readonly claims: DwarfClaims
  /** Scans `count` values of `type` from `addr` on, in the heap block `slot`, later (the flow reads in address order). */
  later(addr: number, type: DwarfType, slot: number, count?: number): void
  /** A std::string's buffer, the block `slot` at `start`, if the byte at `nulAt` is its terminating NUL (read later, in address order). */
  endsString(nulAt: number, slot: number, start: number): void
  /** Whether a live heap block holds addr: then `block` is that block (until the next call). */
  live(addr: number): boolean
  readonly block: {readonly index: number; readonly start: number; readonly size: number}
  /** Whether a value of this type can hold a pointer the flow follows. */
  hasPointers(type: DwarfType, depth?: number): boolean
}

/** Elements scanned per array or container, at most. */
export const MAX_ELEMENTS = 1 << 22
