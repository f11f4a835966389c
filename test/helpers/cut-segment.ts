import fs from 'node:fs'

const PT_LOAD = 1

/** Where a core's program headers are (from its ELF header, read from `fd`). */
export function programHeaderTable(fd: number): {phoff: number; phentsize: number; phnum: number} {
  const ehdr = Buffer.alloc(64)
  fs.readSync(fd, ehdr, 0, 64, 0)
  return {phoff: Number(ehdr.readBigUInt64LE(0x20)), phentsize: ehdr.readUInt16LE(0x36), phnum: ehdr.readUInt16LE(0x38)}
}

/**
 * Makes the bytes of the core's PT_LOAD segment holding addr absent from the core (p_filesz = 0,
 * as for memory the kernel did not dump), in place, as a damaged or filtered core would have it.
 * Returns the segment's [start, end).
 */
export function cutSegmentHolding(corePath: string, addr: number): [number, number] {
  const fd = fs.openSync(corePath, 'r+')
  try {
    const {phoff, phentsize, phnum} = programHeaderTable(fd)
    const ph = Buffer.alloc(phentsize)
    for (let i = 0; i < phnum; i++) {
      fs.readSync(fd, ph, 0, phentsize, phoff + i * phentsize)
      if (ph.readUInt32LE(0) !== PT_LOAD) continue
      const vaddr = Number(ph.readBigUInt64LE(16))
      const memsz = Number(ph.readBigUInt64LE(40))
      if (addr < vaddr || addr >= vaddr + memsz) continue
      ph.writeBigUInt64LE(0n, 32)
      fs.writeSync(fd, ph, 0, phentsize, phoff + i * phentsize)
      return [vaddr, vaddr + memsz]
    }
  } finally {
    fs.closeSync(fd)
  }
  throw new Error(`no PT_LOAD segment holds 0x${addr.toString(16)}`)
}

/** Writes 64-bit values into the core file at process addresses (each must be in the core). */
export function writeWords(corePath: string, segmentAt: (a: number) => {start: number; fileOffset: number} | undefined, words: Array<[number, number]>): void {
  const fd = fs.openSync(corePath, 'r+')
  try {
    const buf = Buffer.alloc(8)
    for (const [address, value] of words) {
      const seg = segmentAt(address)
      if (!seg) throw new Error(`0x${address.toString(16)} is not in the core`)
      buf.writeBigUInt64LE(BigInt(value))
      fs.writeSync(fd, buf, 0, 8, seg.fileOffset + (address - seg.start))
    }
  } finally {
    fs.closeSync(fd)
  }
}
