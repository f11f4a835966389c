import type {Thread} from '../core/thread-registers.js'
import type {Program} from './program.js'
import {pthreadAddress, pthreadUnknownWhy} from './thread-pointer.js'
import {threadDb} from './thread-db.js'
import {u64le} from '../util/u64le.js'

/**
 * What glibc's NPTL knows of each thread, read from its `struct pthread` (the TCB at the thread's
 * fs_base) the way libthread_db reads it: field offsets from the `_thread_db_*` descriptors glibc
 * carries in its dynamic symbol table ({bits, count, offset} triples), or, without the libc file,
 * by a validated structural search (the tid equal to the core's note, the self pointer at +16).
 */
export interface NptlThread {
  tid: number
  /** The TCB's address (pthread_t): the thread's fs_base. */
  pthread: number
  /** The tid stored in struct pthread equals the core's note. */
  tidChecked: boolean
  startRoutine: number | null
  startArg: number | null
  /** Where struct pthread keeps the start argument (a root: the thread may be its only holder). */
  startArgSlot: number | null
  /** The thread's stack block (mmap'ed by glibc; null for the main thread) and guard size. */
  stackBlock: {start: number; size: number} | null
  guardSize: number | null
  /** Non-null pthread-specific values: key, the address of the word holding the value, and the value. */
  specific: Array<{key: number; slot: number; value: number}>
}

export interface NptlView {
  threads: NptlThread[]
  /** How the offsets were found. */
  how: 'thread_db descriptors' | 'structural search' | 'none'
  /** What could not be read, and why. */
  notes: string[]
}

interface Offsets {
  tid: number
  startRoutine: number | null
  specific: number | null
  keyDataSize: number
  keyDataData: number
  sizeofPthread: number
}

const KEY_2NDLEVEL_SIZE = 32
const KEY_1STLEVEL_SIZE = 32
const SELF_OFFSET = 16

const views = new WeakMap<Program, NptlView>()

/** The NPTL view of a program's threads, read once per program. */
export function nptlThreads(program: Program): NptlView {
  let view = views.get(program)
  if (!view) views.set(program, (view = readNptl(program)))
  return view
}

function readNptl(program: Program): NptlView {
  const notes: string[] = []
  const unknown = pthreadUnknownWhy(program)
  if (unknown) notes.push(unknown)
  const known = program.core.threads.filter(t => pthreadAddress(program, t) !== null)
  if (!known.length) return {threads: [], how: 'none', notes}
  let offsets = descriptorOffsets(program)
  let how: NptlView['how'] = 'thread_db descriptors'
  if (!offsets) {
    notes.push('libc.so.6 file not found (or it has no _thread_db_* descriptors): struct pthread fields found by structural search; start routines and thread-specific data unknown')
    offsets = searchedOffsets(program)
    how = offsets ? 'structural search' : 'none'
  }
  if (!offsets) {
    notes.push('no struct pthread found at the threads\' fs_base')
    return {threads: [], how, notes}
  }
  const stackOffset = stackBlockOffset(program, offsets.sizeofPthread)
  const threads = known.map(t => readThread(program, t, offsets!, stackOffset))
  if (threads.some(t => !t.tidChecked)) notes.push(`tid in struct pthread differs from the core's note for thread(s) ${threads.filter(t => !t.tidChecked).map(t => t.tid).join(', ')}`)
  if (stackOffset === null) notes.push('stack block fields of struct pthread not found (no thread with a glibc-allocated stack)')
  return {threads, how, notes}
}

function readThread(program: Program, t: Thread, o: Offsets, stackOffset: number | null): NptlThread {
  const m = program.core.memory
  const tcb = pthreadAddress(program, t)!
  const tidWord = m.readU64(tcb + o.tid)
  const tid = tidWord === undefined ? null : tidWord % 0x1_0000_0000
  const startRoutine = o.startRoutine === null ? null : (m.readU64(tcb + o.startRoutine) ?? null)
  const startArg = o.startRoutine === null ? null : (m.readU64(tcb + o.startRoutine + 8) ?? null)
  let stackBlock: NptlThread['stackBlock'] = null
  let guardSize: number | null = null
  if (stackOffset !== null) {
    const start = m.readU64(tcb + stackOffset)
    const size = m.readU64(tcb + stackOffset + 8)
    if (start && size && start < tcb && tcb < start + size) {
      stackBlock = {start, size}
      guardSize = m.readU64(tcb + stackOffset + 16) ?? null
    }
  }
  return {
    tid: t.tid,
    pthread: tcb,
    tidChecked: tid === t.tid,
    startRoutine: startRoutine || null,
    startArg: startRoutine ? startArg : null,
    startArgSlot: startRoutine && o.startRoutine !== null ? tcb + o.startRoutine + 8 : null,
    stackBlock,
    guardSize,
    specific: o.specific === null ? [] : specificValues(program, tcb + o.specific, o),
  }
}

/** pthread->specific[32] points to blocks of 32 {seq, data} entries; key = 32·i + j. */
function specificValues(program: Program, specific: number, o: Offsets): NptlThread['specific'] {
  const m = program.core.memory
  const out: NptlThread['specific'] = []
  for (let i = 0; i < KEY_1STLEVEL_SIZE; i++) {
    const block = m.readU64(specific + i * 8)
    if (!block) continue
    const bytes = m.readBytes(block, KEY_2NDLEVEL_SIZE * o.keyDataSize)
    if (!bytes) continue
    for (let j = 0; j < KEY_2NDLEVEL_SIZE; j++) {
      const at = j * o.keyDataSize + o.keyDataData
      const value = u64le(bytes, at)
      if (value) out.push({key: i * KEY_2NDLEVEL_SIZE + j, slot: block + at, value})
    }
  }
  return out
}

/** Offsets from libc's _thread_db_* descriptors. */
function descriptorOffsets(program: Program): Offsets | null {
  const db = threadDb(program)
  if (!db) return null
  const tid = db.field('pthread_tid')
  const sizeofPthread = db.sizeOf('pthread')
  if (!tid || !sizeofPthread || tid[2] + 4 > sizeofPthread || sizeofPthread > 1 << 16) return null
  const start = db.field('pthread_start_routine')
  const specific = db.field('pthread_specific')
  const keyData = db.field('pthread_key_data_data')
  const keyDataSize = db.sizeOf('pthread_key_data')
  return {
    tid: tid[2],
    startRoutine: start && start[2] + 16 <= sizeofPthread ? start[2] : null,
    specific: specific && keyData && keyDataSize && specific[2] + KEY_1STLEVEL_SIZE * 8 <= sizeofPthread ? specific[2] : null,
    keyDataSize: keyDataSize ?? 16,
    keyDataData: keyData ? keyData[2] : 8,
    sizeofPthread,
  }
}

/** Without descriptors: the offset where every thread's struct pthread holds its own tid. */
function searchedOffsets(program: Program): Offsets | null {
  const m = program.core.memory
  const threads = program.core.threads
  const SEARCH = 4096
  const tcbs = threads.flatMap(t => pthreadAddress(program, t) ?? [])
  if (tcbs.length < threads.length) return null
  const blocks = tcbs.map(tcb => (m.readU64(tcb + SELF_OFFSET) === tcb ? m.readBytes(tcb, SEARCH) : undefined))
  if (blocks.some(b => !b)) return null
  for (let at = 0; at + 4 <= SEARCH; at += 4) {
    if (threads.every((t, i) => blocks[i]!.readUInt32LE(at) === t.tid)) {
      return {tid: at, startRoutine: null, specific: null, keyDataSize: 16, keyDataData: 8, sizeofPthread: SEARCH}
    }
  }
  return null
}

/**
 * struct pthread's `stackblock, stackblock_size, guardsize` are not described to libthread_db:
 * found as the one offset where, for every thread with a glibc-allocated stack, a (start, size)
 * pair encloses the TCB (glibc puts the TCB at the top of the block it mmaps).
 */
function stackBlockOffset(program: Program, sizeofPthread: number): number | null {
  const m = program.core.memory
  const limit = Math.min(sizeofPthread, 4096)
  const candidates = program.core.threads
    .flatMap(t => pthreadAddress(program, t) ?? [])
    .map(tcb => ({tcb, bytes: m.readBytes(tcb, limit)}))
    .filter((c): c is {tcb: number; bytes: Buffer} => c.bytes !== undefined)
  let found: number | null = null
  for (let at = 0; at + 24 <= limit; at += 8) {
    let matches = 0
    let contradicts = false
    for (const c of candidates) {
      const start = u64le(c.bytes, at)
      const size = u64le(c.bytes, at + 8)
      if (start === 0) continue // the main thread's stack is the kernel's (its size word holds other things)
      if (start < c.tcb && c.tcb < start + size && (start + size - c.tcb) < 1 << 20 && size % 4096 === 0) matches++
      else contradicts = true
    }
    if (matches > 0 && !contradicts) {
      if (found !== null) return null // ambiguous: trust neither
      found = at
    }
  }
  return found
}
