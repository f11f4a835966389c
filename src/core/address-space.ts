import type {FileReader} from './file-reader.js'
import {PF_R, PF_W, PF_X, PT_LOAD, type ProgramHeader} from './core-header.js'
import {lastAtOrBelow} from '../util/search.js'
import {u64le} from '../util/u64le.js'

/**
 * User space ends at 2^48 on aarch64 (48-bit virtual addresses: a kernel's core maps the executable
 * at 0xaaaa… and libraries at 0xffff…), at 2^47 on x86-64 (4-level paging): one bound for both,
 * and every address below it is exact as a JS number.
 */
export const USER_SPACE_END = 2 ** 48

/** Why an address cannot be read from the core. */
export type Unreadable =
  | 'unmapped' // no PT_LOAD covers it: the process had nothing there
  | 'not-dumped' // mapped, but the core holds none of its bytes (p_filesz 0: e.g. unmodified file pages)
  | 'truncated' // the core file ends before this segment's bytes (a cut or partial core)

export interface Segment {
  start: number
  end: number
  flags: number
  fileOffset: number
  /**
   * Bytes the core holds for this segment (p_filesz). The rest up to memsz is not in the core
   * (the kernel dumps one page of a mapped ELF file's header; a hostile core claims terabytes):
   * it reads as absent ('not-dumped'), never as zeros to scan.
   */
  fileSize: number
  /** fileSize clipped to what the core file actually contains. */
  presentSize: number
}

export function permissions(flags: number): string {
  return (flags & PF_R ? 'r' : '-') + (flags & PF_W ? 'w' : '-') + (flags & PF_X ? 'x' : '-')
}

/**
 * The core's memory segments (PT_LOAD program headers) sorted by address, clipped to what the
 * file holds. Segments of a hostile or damaged core may overlap: each is cut where the next
 * begins, so every address is in one segment at most and every walk over them is bounded.
 */
export function loadSegments(programs: ProgramHeader[], fileSize: number): Segment[] {
  const sorted = programs
    // Kernel-space segments (the vsyscall page at 0xffffffffff600000) are not process memory,
    // and their addresses are beyond what a double holds exactly.
    .filter(p => p.type === PT_LOAD && p.memsz > 0 && p.vaddr + p.memsz <= USER_SPACE_END)
    .map(p => ({
      start: p.vaddr,
      end: p.vaddr + p.memsz,
      flags: p.flags,
      fileOffset: p.offset,
      fileSize: Math.min(p.filesz, p.memsz),
      presentSize: Math.max(0, Math.min(p.filesz, p.memsz, fileSize - p.offset)),
    }))
    .sort((a, b) => a.start - b.start || b.end - a.end)
  const out: Segment[] = []
  for (const [i, s] of sorted.entries()) {
    const prev = out[out.length - 1]
    // A segment starting where an earlier one does, or inside it, was cut to nothing: dropped.
    if (prev && s.start < prev.end) continue
    const next = sorted[i + 1]
    if (next && next.start < s.end) {
      const size = next.start - s.start
      out.push({...s, end: next.start, fileSize: Math.min(s.fileSize, size), presentSize: Math.min(s.presentSize, size)})
    } else out.push(s)
  }
  return out
}

/** The PT_LOAD headers that overlap another, as [start, end) pairs (loadSegments cut them). */
export function overlappingSegments(programs: ProgramHeader[]): Array<[number, number]> {
  const loads = programs.filter(p => p.type === PT_LOAD && p.memsz > 0 && p.vaddr + p.memsz <= USER_SPACE_END).sort((a, b) => a.vaddr - b.vaddr)
  const out: Array<[number, number]> = []
  for (let i = 1; i < loads.length; i++) {
    const a = loads[i - 1]!
    if (loads[i]!.vaddr < a.vaddr + a.memsz) out.push([a.vaddr, a.vaddr + a.memsz])
  }
  return out
}

/**
 * The process's virtual memory as the core records it: PT_LOAD segments sorted by address and
 * binary-searched. Reads return `undefined` for anything the core cannot answer (never throw), so
 * walks over untrusted pointers can test and go on; `whyUnreadable` tells the reason.
 */
export class AddressSpace {
  readonly segments: readonly Segment[]
  private readonly starts: Float64Array
  private readonly ends: Float64Array
  private last = 0
  private readonly scratch = Buffer.alloc(8)

  constructor(private readonly file: FileReader, segments: readonly Segment[]) {
    this.segments = segments
    this.starts = Float64Array.from(segments, s => s.start)
    this.ends = Float64Array.from(segments, s => s.end)
  }

  /** Index of the segment containing addr, or -1. */
  segmentIndex(addr: number): number {
    const last = this.last
    if (last < this.starts.length && addr >= this.starts[last]! && addr < this.ends[last]!) return last
    const hi = lastAtOrBelow(this.starts, addr)
    if (hi >= 0 && addr < this.ends[hi]!) {
      this.last = hi
      return hi
    }
    return -1
  }

  segmentAt(addr: number): Segment | undefined {
    const i = this.segmentIndex(addr)
    return i < 0 ? undefined : this.segments[i]
  }

  /** Why [addr, addr+length) cannot be read, or undefined when it can. */
  whyUnreadable(addr: number, length = 1): Unreadable | undefined {
    let pos = addr
    const end = addr + length
    while (pos < end) {
      const i = this.segmentIndex(pos)
      if (i < 0) return 'unmapped'
      const s = this.segments[i]!
      const off = pos - s.start
      const stop = Math.min(end, s.end) - s.start
      if (s.fileSize === 0) return 'not-dumped'
      if (s.presentSize < s.fileSize && stop > s.presentSize && off < s.fileSize) return 'truncated'
      if (stop > s.fileSize) return 'not-dumped'
      pos = s.end
    }
    return undefined
  }

  /**
   * The parts of [start, end) whose bytes the core holds, in order: what a walk over memory may
   * read (a segment's bytes past its p_filesz, or cut from the file, are skipped, not scanned).
   */
  presentParts(start: number, end: number): Array<{start: number; end: number}> {
    const parts: Array<{start: number; end: number}> = []
    let i = this.segmentIndex(start)
    if (i < 0) i = lastAtOrBelow(this.starts, start) + 1
    for (; i < this.segments.length && this.starts[i]! < end; i++) {
      const s = this.segments[i]!
      const from = Math.max(start, s.start)
      const to = Math.min(end, s.start + s.presentSize)
      if (to > from) parts.push({start: from, end: to})
    }
    return parts
  }

  /** End of the run of contiguous mapped segments from addr (addr itself when it is unmapped): how far memory there can reach. */
  mappedEnd(addr: number): number {
    let i = this.segmentIndex(addr)
    if (i < 0) return addr
    while (i + 1 < this.segments.length && this.starts[i + 1] === this.ends[i]) i++
    return this.ends[i]!
  }

  /**
   * The first readable address at or after addr, or Infinity: how far a walk over memory the core
   * lacks (a hole in a large object) may skip at once instead of page by page.
   */
  nextReadable(addr: number): number {
    let i = this.segmentIndex(addr)
    if (i >= 0) {
      const s = this.segments[i]!
      const off = addr - s.start
      // Only the bytes the file holds read.
      if (off < s.presentSize) return addr
      i++
    } else i = lastAtOrBelow(this.starts, addr) + 1
    for (; i < this.segments.length; i++) if (this.segments[i]!.presentSize > 0) return this.segments[i]!.start
    return Infinity
  }

  isReadable(addr: number, length = 1): boolean {
    return this.whyUnreadable(addr, length) === undefined
  }

  /**
   * Copies [addr, addr+length) into `into` at `at`. Returns false (leaving `into` partly written)
   * when any byte is unreadable. Contiguous segments are crossed.
   */
  readInto(addr: number, length: number, into: Buffer, at = 0): boolean {
    let pos = addr
    let out = at
    const end = addr + length
    while (pos < end) {
      const i = this.segmentIndex(pos)
      if (i < 0) return false
      const s = this.segments[i]!
      if (s.fileSize === 0) return false
      const off = pos - s.start
      const n = Math.min(end, s.end) - pos
      if (off + n > s.presentSize) return false
      this.file.readInto(s.fileOffset + off, n, into, out)
      pos += n
      out += n
    }
    return true
  }

  readBytes(addr: number, length: number): Buffer | undefined {
    const buf = Buffer.alloc(length)
    return this.readInto(addr, length, buf) ? buf : undefined
  }

  /** A 64-bit word as a number: exact below 2^53 (every user-space address); larger values are rounded. */
  readU64(addr: number): number | undefined {
    const i = this.segmentIndex(addr)
    if (i >= 0) {
      const s = this.segments[i]!
      const off = addr - s.start
      if (off + 8 <= s.presentSize) {
        const w = this.file.word(s.fileOffset + off)
        if (w !== undefined) return w
      }
    }
    if (!this.readInto(addr, 8, this.scratch)) return undefined
    return u64le(this.scratch, 0)
  }

  readU64Big(addr: number): bigint | undefined {
    if (!this.readInto(addr, 8, this.scratch)) return undefined
    return this.scratch.readBigUInt64LE(0)
  }

  readU32(addr: number): number | undefined {
    if (!this.readInto(addr, 4, this.scratch)) return undefined
    return this.scratch.readUInt32LE(0)
  }

  readI32(addr: number): number | undefined {
    if (!this.readInto(addr, 4, this.scratch)) return undefined
    return this.scratch.readInt32LE(0)
  }

  readU16(addr: number): number | undefined {
    if (!this.readInto(addr, 2, this.scratch)) return undefined
    return this.scratch.readUInt16LE(0)
  }

  readU8(addr: number): number | undefined {
    if (!this.readInto(addr, 1, this.scratch)) return undefined
    return this.scratch[0]
  }

  /**
   * readU8 for a lone byte, far from what the reader goes on to read: from the read cache when its
   * block is there, else read alone, nothing cached (FileReader.peekInto).
   */
  peekU8(addr: number): number | undefined {
    return this.peekInto(addr, 1, this.scratch) ? this.scratch[0] : undefined
  }

  /**
   * readInto for bytes far from what the reader goes on to read: from the read cache when one
   * block there holds them, else read alone, nothing cached (FileReader.peekInto). A range that
   * leaves its segment is read as readInto reads it.
   */
  peekInto(addr: number, length: number, into: Buffer, at = 0): boolean {
    const i = this.segmentIndex(addr)
    if (i < 0) return false
    const s = this.segments[i]!
    const off = addr - s.start
    if (s.fileSize === 0) return false
    if (off + length > s.presentSize) return this.readInto(addr, length, into, at)
    this.file.peekInto(s.fileOffset + off, length, into, at)
    return true
  }

  /** A NUL-terminated string of at most `max` bytes (undefined if unreadable or unterminated). */
  readCString(addr: number, max = 4096): string | undefined {
    const chunk = 256
    const parts: Buffer[] = []
    for (let done = 0; done < max; done += chunk) {
      const n = Math.min(chunk, max - done)
      let buf = this.readBytes(addr + done, n)
      if (!buf) {
        // The string may end just before an unreadable page: retry byte-exact up to the boundary.
        buf = Buffer.alloc(0)
        for (let k = 0; k < n; k++) {
          const b = this.readU8(addr + done + k)
          if (b === undefined) return undefined
          if (b === 0) return Buffer.concat([...parts, buf]).toString('latin1')
          buf = Buffer.concat([buf, Buffer.of(b)])
        }
      }
      const nul = buf.indexOf(0)
      if (nul >= 0) {
        parts.push(buf.subarray(0, nul))
        return Buffer.concat(parts).toString('latin1')
      }
      parts.push(buf)
    }
    return undefined
  }
}
