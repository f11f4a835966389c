import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {FIXTURES, fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

const shared = fixtureIndex().find(f => f.config === 'shared' && f.gperftools === '2.10')!
const minimal = fixtureIndex().find(f => f.config === 'minimal' && f.gperftools === '2.10')!
let tmp: string
let corePath: string

/** Program headers of a core, read independently of toma's reader. */
function programHeaders(file: string) {
  const b = fs.readFileSync(file).subarray(0, 64 * 1024)
  const phoff = Number(b.readBigUInt64LE(32))
  const phnum = b.readUInt16LE(56)
  return Array.from({length: phnum}, (_, i) => {
    const at = phoff + i * 56
    return {type: b.readUInt32LE(at), offset: Number(b.readBigUInt64LE(at + 8)), vaddr: Number(b.readBigUInt64LE(at + 16)), filesz: Number(b.readBigUInt64LE(at + 32))}
  })
}

function copyCut(length: number, name: string): string {
  const out = path.join(tmp, name)
  const fd = fs.openSync(corePath, 'r')
  const buf = Buffer.alloc(length)
  fs.readSync(fd, buf, 0, length, 0)
  fs.closeSync(fd)
  fs.writeFileSync(out, buf)
  return out
}

function patched(name: string, offset: number, bytes: number[]): string {
  const out = path.join(tmp, name)
  fs.copyFileSync(corePath, out)
  const fd = fs.openSync(out, 'r+')
  fs.writeSync(fd, Buffer.from(bytes), 0, bytes.length, offset)
  fs.closeSync(fd)
  return out
}

function expectOneLineError(r: {status: number | null; stderr: string}, pattern: RegExp) {
  expect(r.status).not.toBe(0)
  expect(r.status).not.toBeNull()
  const lines = r.stderr.trimEnd().split('\n')
  expect(lines, r.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^toma: /)
  expect(lines[0]).toMatch(pattern)
  expect(r.stderr).not.toMatch(/\n\s+at /) // no stack trace
}

/** Rewrites a gdb core with its note segment first and memory after it, as the kernel lays cores out. */
function kernelLayout(src: Buffer) {
  const phoff = Number(src.readBigUInt64LE(32))
  const phnum = src.readUInt16LE(56)
  const phdrs = programHeaders(corePath)
  const parts: Buffer[] = [Buffer.from(src.subarray(0, phoff + phnum * 56))]
  let pos = parts[0]!.length
  // Notes first, then memory, with the largest user-space segment (the heap) last so that a cut lands in it.
  const rank = (i: number) => (phdrs[i]!.type === 4 ? -1 : phdrs[i] === biggest ? 1 : 0)
  const biggest = phdrs.filter(p => p.type === 1 && p.vaddr < 2 ** 47).sort((a, b) => b.filesz - a.filesz)[0]
  const order = [...phdrs.keys()].sort((a, b) => rank(a) - rank(b))
  let lastLoad = phdrs[0]!
  for (const i of order) {
    const p = phdrs[i]!
    if (p.filesz === 0) continue
    const aligned = p.type === 1 ? Math.ceil(pos / 4096) * 4096 : pos
    if (aligned > pos) parts.push(Buffer.alloc(aligned - pos))
    parts.push(src.subarray(p.offset, p.offset + p.filesz))
    parts[0]!.writeBigUInt64LE(BigInt(aligned), phoff + i * 56 + 8)
    pos = aligned + p.filesz
    if (p.type === 1) lastLoad = {...p, offset: aligned}
  }
  return {file: Buffer.concat(parts), lastLoad}
}

beforeAll(async () => {
  tmp = testTemp('toma-bad-')
  corePath = await fixtureCorePath(shared.id)
})
afterAll(() => fs.rmSync(tmp, {recursive: true, force: true}))

describe('bad input gives one clear line on stderr and a non-zero exit', () => {
  it('missing file', async () => {
    expectOneLineError(await runToma(['info', path.join(tmp, 'nope.core')]), /no such file/)
    expectOneLineError(await runToma(['analyze', path.join(tmp, 'nope.core')]), /no such file/)
  })

  it('not an ELF file', async () => {
    const f = path.join(tmp, 'text')
    fs.writeFileSync(f, 'hello, this is not a core\n')
    expectOneLineError(await runToma(['info', f]), /not an ELF file/)
    const empty = path.join(tmp, 'empty')
    fs.writeFileSync(empty, '')
    expectOneLineError(await runToma(['analyze', empty]), /not an ELF file/)
  })

  it('an ELF file that is not a core', async () => {
    expectOneLineError(await runToma(['info', path.join(FIXTURES, shared.id, 'heapdemo')]), /not a core dump/)
  })

  it('a core cut inside its notes', async () => {
    const note = programHeaders(corePath).find(p => p.type === 4)!
    const cut = copyCut(note.offset + Math.floor(note.filesz / 2), 'cut-notes.core')
    expectOneLineError(await runToma(['info', cut]), /truncated core/)
    expectOneLineError(await runToma(['analyze', cut]), /truncated core/)
  })

  it('a core cut inside its program headers', async () => {
    expectOneLineError(await runToma(['info', copyCut(100, 'cut-headers.core')]), /truncated core/)
  })

  it('a core cut inside a PT_LOAD: reads past the cut say so', async () => {
    // gdb writes the notes after the memory, so cutting its cores inside a PT_LOAD also cuts the
    // notes (the test above). The kernel writes notes first: lay the same core out that way, then cut.
    const {file, lastLoad} = kernelLayout(fs.readFileSync(corePath))
    const cutAt = lastLoad.offset + Math.floor(lastLoad.filesz / 2 / 4096) * 4096
    const cut = path.join(tmp, 'cut-load.core')
    fs.writeFileSync(cut, file.subarray(0, cutAt))
    const core = Core.open(cut)
    const past = lastLoad.vaddr + (cutAt - lastLoad.offset) + 8
    expect(core.truncation).not.toBeNull()
    expect(core.memory.whyUnreadable(past, 8)).toBe('truncated')
    expect(core.memory.readU64(past)).toBeUndefined()
    expect(core.memory.isReadable(lastLoad.vaddr, 8)).toBe(true)
    core.close()
    const r = await runToma(['info', cut])
    expect(r.status).toBe(0)
    expect(r.stderr).toMatch(/^toma: warning: .* is truncated/)
    const whole = path.join(tmp, 'kernel-layout.core')
    fs.writeFileSync(whole, file)
    const ok = Core.open(whole)
    expect(ok.truncation).toBeNull()
    expect(ok.memory.readU64Big(past)).toBe(Core.open(corePath).memory.readU64Big(past))
  })

  it('a 32-bit core', async () => {
    expectOneLineError(await runToma(['info', patched('elf32.core', 4, [1])]), /32-bit/)
  })

  it('a core of another machine', async () => {
    // EM_RISCV (243): neither of the machines toma reads (an aarch64 core is read: test/core/arm64.test.ts).
    expectOneLineError(await runToma(['info', patched('riscv.core', 18, [243, 0])]), /machine .*; toma reads x86-64 and aarch64 cores only/)
  })

  it('a library whose build-id does not match the core', async () => {
    const wrong = path.join(FIXTURES, minimal.id, minimal.tcmalloc!)
    expectOneLineError(await runToma(['analyze', corePath, '--tcmalloc', wrong, '--index', path.join(tmp, 'x.idx')]), /build-id [0-9a-f]+ of .* does not match [0-9a-f]+ in the core/)
  })

  it('a core of a process without TCMalloc', async () => {
    const core = path.join(tmp, 'sleep.core')
    fs.writeFileSync(core, zlib.brotliDecompressSync(fs.readFileSync(path.join(FIXTURES, '..', 'other', 'no-tcmalloc', 'core.br'))))
    expect((await runToma(['info', core])).status).toBe(0)
    expectOneLineError(await runToma(['analyze', core]), /no TCMalloc in this process/)
    expectOneLineError(await runToma(['analyze', core, '--tcmalloc', path.join(FIXTURES, shared.id, 'libtcmalloc.so.4')]), /maps no libtcmalloc/)
  })

  it('an executable that does not match the core', async () => {
    const other = fixtureIndex().find(f => f.config === 'static')!
    expectOneLineError(await runToma(['analyze', corePath, '--exe', fixtureFlags(other).exe, '--index', path.join(tmp, 'y.idx')]), /does not match/)
  })
})

describe('command-line mistakes are said whole, on one line', () => {
  let empty: string
  beforeAll(() => {
    empty = testTemp('toma-usage-')
  })

  it('a missing argument names the argument and the forms it takes', async () => {
    expectOneLineError(await runToma(['find-object'], {cwd: empty}), /missing required argument: ADDRESS \(an address: 0x… hexadecimal .* or decimal/)
    expectOneLineError(await runToma(['analyze'], {cwd: empty}), /missing required argument: CORE/)
  })

  it('conflicting flags name both flags', async () => {
    expectOneLineError(await runToma(['refs', '0x1000', corePath, '--in', '--out'], {cwd: empty}), /--in=true cannot also be provided when using --out.*--out=true cannot also be provided when using --in/)
  })

  it('a flag out of range names the flag, the allowed range and the value given', async () => {
    expectOneLineError(await runToma(['refs', '0x1000', corePath, '--depth', '0'], {cwd: empty}), /Parsing --depth; Expected an integer greater than or equal to 1 but received: 0/)
    expectOneLineError(await runToma(['refs', '0x1000', corePath, '--depth', '65'], {cwd: empty}), /--depth.*less than or equal to 64 but received: 65/)
  })

  it('a thread id that is not a number is bad input, not an internal error', async () => {
    for (const env of [{}, {TOMA_OCLIF: '1'}] as Record<string, string>[]) {
      const r = await runToma(['stack', 'x', corePath], {cwd: empty, env})
      expectOneLineError(r, /Expected an integer but received: x/)
      expect(r.status).toBe(2)
    }
  })

  it('a bad address says which forms are accepted', async () => {
    expectOneLineError(await runToma(['find-object', 'zz', corePath], {cwd: empty}), /zz: not an address \(expected 0x… hex or decimal\)/)
  })

  it('arguments come from the command line only, never from a piped stdin', async () => {
    // With "x" piped in, oclif would take stdin as the missing core argument and look for a file "x".
    const r = await runToma(['find-object', '0x1000'], {cwd: empty, input: 'x\n'})
    expectOneLineError(r, /no core given and no analysis made in this folder/)
    expect(r.stderr).not.toMatch(/\bx: no such file/)
    expectOneLineError(await runToma(['analyze'], {cwd: empty, input: `${corePath}\n`}), /missing required argument: CORE/)
  })

  it('help for a command, and a suggestion for a mistyped one', async () => {
    const help = await runToma(['help', 'analyze'], {cwd: empty})
    expect(help.status, help.stderr).toBe(0)
    expect(help.stdout).toMatch(/USAGE\s+\$ toma analyze CORE/)
    expect(help.stdout).toMatch(/--tcmalloc=<value>/)
    const typo = await runToma(['anlyze', corePath], {cwd: empty})
    expect(typo.status).toBe(2)
    expectOneLineError(typo, /anlyze is not a toma command; did you mean analyze\?/)
    const refsHelp = await runToma(['refs', '--help'], {cwd: empty})
    expect(refsHelp.stdout).toMatch(/ADDRESS\s+an address: 0x… hexadecimal .* or decimal/)
  })
})
