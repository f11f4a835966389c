import type {AddressSpace} from '../../core/address-space.js'

/** A next read this close is taken to share the read cache's block (the naming worker's are 16 KiB). */
const NEAR = 4096

/**
 * Reads [addr, addr+length) for a reader going through addresses in order, `next` the address it
 * reads after this one: through the read cache where `next` is near (the block read once serves
 * both), else alone, nothing cached (a block read for a few bytes cost a 16 KiB copy, and evicted
 * blocks still to be read). False where a byte is unreadable.
 */
export function readSorted(memory: AddressSpace, addr: number, length: number, into: Buffer, next: number): boolean {
  return next >= addr && next - addr < NEAR ? memory.readInto(addr, length, into) : memory.peekInto(addr, length, into)
}
