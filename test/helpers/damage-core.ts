import fs from 'node:fs'
import type {Core} from '../../src/core/core.js'

/** Writes a 64-bit value into a copy of a core at a process address (core: the original, opened, for its segments). */
export function pokeU64(file: string, core: Core, address: number, value: number): void {
  const seg = core.memory.segmentAt(address)!
  const buf = Buffer.alloc(8)
  buf.writeBigUInt64LE(BigInt(value))
  const fd = fs.openSync(file, 'r+')
  fs.writeSync(fd, buf, 0, 8, seg.fileOffset + (address - seg.start))
  fs.closeSync(fd)
}
