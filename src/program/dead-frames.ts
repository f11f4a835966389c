import type {Program} from './program.js'
import {u64le} from '../util/u64le.js'

/** How far below the stack pointer to look for frames of returned calls. */
const MAX_DEAD_BYTES = 1 << 20

export interface DeadFrame {
  /** The stale return address that marks the frame's bottom (it points into `pc`'s function). */
  returnAddressAt: number
  pc: number
  /** The frame's words: [start, end), above its return address up to the next one (or the live stack). */
  start: number
  end: number
}

/**
 * Frames of calls that have returned, recovered by the calling convention (TOMA part 5): below a
 * thread's stack pointer the bytes of returned calls stay until overwritten. A word there that
 * points just after a call instruction in a module's code is a stale return address; the call was
 * made by the function it points into, so the words above it, up to the next stale return
 * address, were that function's frame. They are leads, not roots: nothing there keeps anything alive.
 */
export function deadFrames(program: Program, rsp: number, lowest: number): DeadFrame[] {
  const memory = program.core.memory
  const seg = memory.segmentAt(rsp)
  if (!seg) return []
  // Below the stack pointer, the ABI's red zone still belongs to the live frame.
  const top = rsp - program.core.arch.redZone
  const bottom = Math.max(seg.start, lowest, top - MAX_DEAD_BYTES)
  if (top <= bottom) return []
  const bytes = memory.readBytes(bottom, top - bottom)
  if (!bytes) return []
  const marks: Array<{at: number; pc: number}> = []
  for (let i = bytes.length - 8; i >= 0; i -= 8) {
    const w = u64le(bytes, i)
    if (w !== 0 && isReturnAddress(program, w)) marks.push({at: bottom + i, pc: w})
  }
  // marks run from high addresses to low: each frame spans from its mark up to the previous one.
  const frames: DeadFrame[] = []
  let end = top
  for (const m of marks) {
    frames.push({returnAddressAt: m.at, pc: m.pc, start: m.at + 8, end})
    end = m.at
  }
  return frames
}

const codeCache = new WeakMap<object, Map<number, boolean>>()

/**
 * The word points just after a call instruction in a module's code: on x86-64 call rel32, or call
 * r/m64 by register or memory; on aarch64 BL, BLR or their pointer-authenticating forms.
 */
export function isReturnAddress(program: Program, addr: number): boolean {
  const loaded = program.moduleAt(addr)
  const file = loaded?.file
  if (!loaded || !file) return false
  let cache = codeCache.get(file)
  if (!cache) codeCache.set(file, (cache = new Map()))
  const vaddr = addr - loaded.module.loadBias
  const hit = cache.get(vaddr)
  if (hit !== undefined) return hit
  const answer = (program.core.arch.name === 'aarch64' ? followsAarch64Call(file.readVirtual(vaddr - 4, 4)) : followsCall(file.readVirtual(vaddr - 7, 7))) && isExecutable(file, vaddr)
  cache.set(vaddr, answer)
  return answer
}

function isExecutable(file: {segments: Array<{type: number; flags: number; vaddr: number; memsz: number}>}, vaddr: number): boolean {
  const PT_LOAD = 1
  const PF_X = 1
  return file.segments.some(s => s.type === PT_LOAD && (s.flags & PF_X) !== 0 && vaddr > s.vaddr && vaddr <= s.vaddr + s.memsz)
}

/**
 * `before` holds the instruction just before the candidate address (aarch64's are 4 bytes, aligned):
 * BL imm26; BLR Xn; BLRAA, BLRAB, BLRAAZ, BLRABZ. Masks on an instruction word, not an address.
 */
function followsAarch64Call(before: Buffer | undefined): boolean {
  if (!before || before.length < 4) return false
  const insn = before.readUInt32LE(0)
  return insn >>> 26 === 0b100101 || ((insn & 0xfffffc1f) >>> 0) === 0xd63f0000 || ((insn & 0xfefff800) >>> 0) === 0xd63f0800
}

/** `before` holds the 7 bytes ending just before the candidate address. */
function followsCall(before: Buffer | undefined): boolean {
  if (!before || before.length < 7) return false
  const at = (back: number) => before[7 - back]!
  if (at(5) === 0xe8) return true // call rel32
  // call r/m64 is FF /2: the ModRM byte's reg field is 2; its length depends on mod and r/m.
  for (const len of [2, 3, 4, 6, 7]) {
    if (at(len) !== 0xff) continue
    const modrm = at(len - 1)
    if (((modrm >> 3) & 7) !== 2) continue
    if (callLength(modrm, len >= 3 ? at(len - 2) : 0) === len) return true
  }
  return false
}

/** Length of `FF /2 modrm [sib] [disp]` from its ModRM (and SIB) byte. */
function callLength(modrm: number, sib: number): number {
  const mod = modrm >> 6
  const rm = modrm & 7
  if (mod === 3) return 2
  const hasSib = rm === 4
  let len = 2 + (hasSib ? 1 : 0)
  if (mod === 0) {
    if (rm === 5) len += 4 // rip-relative
    else if (hasSib && (sib & 7) === 5) len += 4
  } else if (mod === 1) len += 1
  else len += 4
  return len
}
