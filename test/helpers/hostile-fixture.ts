import fs from 'node:fs'
import path from 'node:path'
import {parseHeaders} from '../../src/elf/headers.js'
import {fixtureCorePath, FIXTURES, type Truth} from './fixture-core.js'

/**
 * A real fixture (v2.10-sampled: a core with sampled allocations, so `profile` has something to
 * write) made hostile the way anyone who can write a file name, a library path or a string in
 * memory could: copies of its core and executable with bytes replaced, each string by one of the
 * same length, so every offset stays valid.
 *  - the core's file name holds a newline, a DOT statement with a `javascript:` URL and an OSC;
 *  - NT_FILE: libstdc++'s path (all its mappings) holds OSC 0 (retitle), CSI 2J (erase), CR LF
 *    and a forged "Warnings (0)", C1 CSI (U+009B), DEL and a bidi override (U+202E);
 *  - NT_PRPSINFO: the process name and arguments hold OSC 0, CSI, C1, DEL, CR LF and OSC 8 (a link);
 *  - the heap: the std::string buffer of customer1's address holds OSC 0, CSI K, CR LF, C1, DEL
 *    and U+202E (as UTF-8: bytes E2 80 AE);
 *  - the executable's .strtab: `heapdemo_worker1` (thread 2's start routine) holds OSC 0 and CR LF,
 *    and `_ZTVN3app4NodeE` (app::Node's vtable) is renamed to a real mangled template name that
 *    demangles to 26,618 characters (`B<B<…<A, A>…>>` twelve deep, each level a substitution of
 *    the last: GCC mangles such nested templates this way), written over the longest name of the
 *    table.
 */
export const HOSTILE_CORE_NAME = 'core\nx [URL="javascript:alert(1)"];\n\u001b]0;title\u0007'
export const HOSTILE_LIBRARY = Buffer.from('/x\u001b]0;T\u0007\u001b[2J\r\nWarnings (0)\u00c2\u009b\u007f\u00e2\u0080\u00ae', 'latin1')
export const HOSTILE_PROCESS_NAME = Buffer.from('\u001b]0;T\u0007\u001b[2J\u009b\u007f', 'latin1')
export const HOSTILE_ARGS = Buffer.from('./heapdemo \r\u001b[2K\nWarnings (0)\n\u001b]8;;http://x\u0007link\u001b]8;;\u0007', 'latin1')
export const HOSTILE_STRING = Buffer.from('\u001b]0;T\u0007\u001b[K\r\nW(0)\u009b\u007f\u00e2\u0080\u00ae', 'latin1')
export const HOSTILE_SYMBOL = Buffer.from('\u001b]0;T\u0007\r\nWarn(0)\u009b', 'latin1')

const ID = 'v2.10-sampled'
const LIBSTDCXX = '/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30'
/** libstdc++'s path as toma reads it from the hostile core (NT_FILE paths are UTF-8): the bytes, padded with 'a' to the length of the real one. */
export const HOSTILE_LIBRARY_PATH = HOSTILE_LIBRARY.toString('utf8') + 'a'.repeat(LIBSTDCXX.length - HOSTILE_LIBRARY.length)
/** In the buffer of customer1's address (heapdemo.cpp), replaced by HOSTILE_STRING. */
const STREET = 'Amphitheatre Parkway'

/** `_ZTV1BI…E`: B<T11, T11> where T0 = A and T(k+1) = B<Tk, Tk>, each Tk written as the substitution S(k)_. */
export function nestedTemplateVtable(depth: number): string {
  const ref = (k: number) => (k === 0 ? 'S0_' : `S${k.toString(36).toUpperCase()}_`)
  const inner = (k: number): string => (k === 0 ? '1A' : `S_I${inner(k - 1)}${ref(k - 1)}E`)
  return `_ZTV1BI${inner(depth - 1)}${ref(depth - 1)}E`
}
export const LONG_TYPE_DEPTH = 12

export interface HostileFixture {
  core: string
  exe: string
  tcmalloc: string
  /** The address of the std::string buffer that holds the hostile text. */
  stringAddress: number
}

/** Replaces `from` by `to` (NUL-padded to its length) everywhere in buf[start, end); returns how many. */
function replaceAll(buf: Buffer, from: Buffer, to: Buffer, start = 0, end = buf.length): number {
  if (to.length > from.length) throw new Error(`replacement longer than ${from.length} bytes`)
  let n = 0
  for (let at = buf.indexOf(from, start); at >= 0 && at + from.length <= end; at = buf.indexOf(from, at + from.length)) {
    buf.fill(0, at, at + from.length)
    to.copy(buf, at)
    n++
  }
  return n
}

interface Phdr {
  type: number
  offset: number
  vaddr: number
  filesz: number
}

function programHeaders(core: Buffer): Phdr[] {
  const phoff = Number(core.readBigUInt64LE(0x20))
  const size = core.readUInt16LE(0x36)
  return Array.from({length: core.readUInt16LE(0x38)}, (_, i) => {
    const at = phoff + i * size
    return {type: core.readUInt32LE(at), offset: Number(core.readBigUInt64LE(at + 8)), vaddr: Number(core.readBigUInt64LE(at + 16)), filesz: Number(core.readBigUInt64LE(at + 32))}
  })
}

export async function hostileFixture(dir: string): Promise<HostileFixture> {
  const core = fs.readFileSync(await fixtureCorePath(ID))
  const phdrs = programHeaders(core)
  const note = phdrs.find(p => p.type === 4)!
  const noteEnd = note.offset + note.filesz
  const nul = Buffer.from([0])
  if (replaceAll(core, Buffer.concat([Buffer.from(LIBSTDCXX), nul]), Buffer.concat([HOSTILE_LIBRARY, Buffer.alloc(LIBSTDCXX.length - HOSTILE_LIBRARY.length, 'a'), nul]), note.offset, noteEnd) !== 5) {
    throw new Error('libstdc++ is not mapped five times in the fixture core')
  }
  // NT_PRPSINFO is the first note: pr_fname[16] at 40, pr_psargs[80] at 56 of its descriptor.
  const namesz = core.readUInt32LE(note.offset)
  if (core.readUInt32LE(note.offset + 8) !== 3) throw new Error('the first note is not NT_PRPSINFO')
  const prpsinfo = note.offset + 12 + Math.ceil(namesz / 4) * 4
  core.fill(0, prpsinfo + 40, prpsinfo + 56)
  HOSTILE_PROCESS_NAME.copy(core, prpsinfo + 40)
  core.fill(0, prpsinfo + 56, prpsinfo + 136)
  HOSTILE_ARGS.copy(core, prpsinfo + 56)
  const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, ID, 'truth.json'), 'utf8')) as Truth
  const stringAddress = Number(truth.objects.find(o => o.name === 'customer1.address.buf')!.address)
  const load = phdrs.find(p => p.type === 1 && stringAddress >= p.vaddr && stringAddress < p.vaddr + p.filesz)!
  const buffer = load.offset + (stringAddress - load.vaddr)
  const street = core.indexOf(STREET, buffer)
  if (street < 0 || street > buffer + 16 || HOSTILE_STRING.length !== STREET.length) throw new Error('no street in customer1\'s address')
  HOSTILE_STRING.copy(core, street)
  const corePath = path.join(dir, HOSTILE_CORE_NAME)
  fs.writeFileSync(corePath, core)

  const exePath = path.join(dir, 'heapdemo')
  const exe = fs.readFileSync(path.join(FIXTURES, ID, 'heapdemo'))
  const sections = parseHeaders(exe, exePath).sections
  const strtab = sections.find(s => s.name === '.strtab')!
  const symtab = sections.find(s => s.name === '.symtab')!
  const strings = exe.subarray(strtab.offset, strtab.offset + strtab.size)
  const nameAt = (name: string) => {
    const i = strings.indexOf(Buffer.from(`\0${name}\0`))
    if (i < 0) throw new Error(`no symbol ${name}`)
    return i + 1
  }
  HOSTILE_SYMBOL.copy(strings, nameAt('heapdemo_worker1'))
  const longest = strings.toString('latin1').split('\0').reduce((a, b) => (b.length > a.length ? b : a))
  const mangled = nestedTemplateVtable(LONG_TYPE_DEPTH)
  const slot = nameAt(longest)
  strings.fill(0, slot, slot + longest.length)
  strings.write(mangled, slot, 'latin1')
  const node = nameAt('_ZTVN3app4NodeE')
  for (let s = symtab.offset; s < symtab.offset + symtab.size; s += 24) if (exe.readUInt32LE(s) === node) exe.writeUInt32LE(slot, s)
  fs.writeFileSync(exePath, exe)
  return {core: corePath, exe: exePath, tcmalloc: path.join(FIXTURES, ID, 'libtcmalloc.so.4'), stringAddress}
}
