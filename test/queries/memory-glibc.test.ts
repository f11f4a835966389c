import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {brotliCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 53 item 1: memory that bypassed TCMalloc (glibc malloc's main arena, found by structure),
// and the anonymous mappings anchored only by a TLS variable or a live heap block
// (fixtures/glibcheap/README.md). Every expected value is what the process recorded about itself
// (glibc's own mallinfo2 and malloc_usable_size, sbrk(0), its blocks) or what gdb read with
// libc6-dbg's symbols (truth.json's gdb).

const DIR = fileURLToPath(new URL('../../fixtures/glibcheap', import.meta.url))
const TCMALLOC = fileURLToPath(new URL('../../fixtures/cores/v2.10-minimal/libtcmalloc_minimal.so.4', import.meta.url))

interface Truth {
  pieces: boolean
  sbrk0: string
  mallinfo2: {arena: number; ordblks: number; smblks: number; hblks: number; hblkhd: number; fsmblks: number; uordblks: number; fordblks: number; keepcost: number}
  blocks: Array<{address: string; request: number; usable: number; state: 'live' | 'freed'}>
  tlsRegion: {start: string; end: string; anchor: string}
  heldRegion: {start: string; end: string; holder: string; offset: number}
  gdb: {mainArena: string; top: string; topSize: number; systemMem: number; sbrkBase: string; nMmaps: number; mmappedMem: number; tcache: string; tcacheChunks: number; tcacheBytes: number; tcacheStructSize: number}
}
interface Part {part: string; bytes: number; blocks: number}

describe('toma memory: glibc malloc beside TCMalloc, and mappings anchored by TLS and heap blocks (glibcheap)', () => {
  let work: string
  let indexPath: string
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as Truth
  const toma = async (args: string[]) => {
    const r = await runToma([...args, indexPath], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    return r.stdout
  }

  beforeAll(async () => {
    work = testTemp('toma-glibcheap-')
    indexPath = path.join(work, 'core.toma-index')
    const core = await brotliCorePath(path.join(DIR, 'core.br'))
    const a = await runToma(['analyze', core, '--exe', path.join(DIR, 'glibcheap'), '--tcmalloc', TCMALLOC, '--index', indexPath], {cwd: work})
    expect(a.status, a.stderr).toBe(0)
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('splits glibc\'s main arena as glibc counts it, its mmapped chunk included, and the lines still add up', async () => {
    const a = JSON.parse(await toma(['memory', '--json'])).accounting
    expect(a.otherAllocators).toHaveLength(1)
    const glibc = a.otherAllocators[0]
    expect(glibc.notes).toEqual([])
    expect(glibc.foundAt).toBe(`main_arena at ${truth.gdb.mainArena} (libc.so.6's data, by its structure)`)
    const mi = truth.mallinfo2
    const part = (name: string) => glibc.parts.find((p: Part) => p.part === name) as Part
    // The chunks the process holds: glibc's usable size of an in-use chunk is its size less 8 (16 when mmapped).
    const live = truth.blocks.filter(b => b.state === 'live')
    const inHeap = live.filter(b => BigInt(b.address) < BigInt(truth.sbrk0) && BigInt(b.address) >= BigInt(truth.gdb.sbrkBase))
    const mapped = live.filter(b => !inHeap.includes(b))
    expect(part('in use')).toEqual({part: 'in use', bytes: inHeap.reduce((n, b) => n + b.usable + 8, 0), blocks: inHeap.length})
    expect(part('free in threads\' tcaches')).toEqual({part: 'free in threads\' tcaches', bytes: truth.gdb.tcacheBytes, blocks: truth.gdb.tcacheChunks})
    expect(part('the threads\' tcache structs (glibc\'s own)')).toEqual({part: 'the threads\' tcache structs (glibc\'s own)', bytes: truth.gdb.tcacheStructSize, blocks: 1})
    expect(part('free in fastbins')).toEqual({part: 'free in fastbins', bytes: mi.fsmblks, blocks: mi.smblks})
    // mallinfo2: fordblks is the free chunks', the fastbins' and the top chunk's bytes; ordblks counts the free chunks and top.
    expect(part('free in bins (unsorted, small, large)')).toEqual({part: 'free in bins (unsorted, small, large)', bytes: mi.fordblks - mi.fsmblks - mi.keepcost, blocks: mi.ordblks - 1})
    expect(part('top chunk (free, at the heap\'s end)')).toEqual({part: 'top chunk (free, at the heap\'s end)', bytes: mi.keepcost, blocks: 1})
    expect(part('mmapped chunks (each its own mapping, in use)')).toEqual({part: 'mmapped chunks (each its own mapping, in use)', bytes: mi.hblkhd, blocks: mi.hblks})
    expect(mapped.map(b => b.usable + 16)).toEqual([mi.hblkhd])
    // glibc marks tcache chunks and its tcache struct in use: with them, the in-use part is mallinfo2's uordblks.
    expect(part('in use').bytes + truth.gdb.tcacheBytes + truth.gdb.tcacheStructSize).toBe(mi.uordblks)
    expect(glibc.parts.reduce((n: number, p: Part) => n + p.bytes, 0)).toBe(mi.arena + mi.hblkhd)
    expect(glibc.ranges).toEqual([
      {start: Number(truth.gdb.sbrkBase), end: Number(truth.sbrk0)},
      {start: Number(mapped[0]!.address) - 16, end: Number(mapped[0]!.address) - 16 + mi.hblkhd},
    ].sort((x, y) => x.start - y.start))

    const line = a.lines.find((l: {part: string}) => l.part.startsWith('glibc malloc, main arena'))
    expect(line).toMatchObject({bytes: mi.arena + mi.hblkhd, inCore: mi.arena + mi.hblkhd, allocator: {property: 'main_arena.system_mem + mp_.mmapped_mem', bytes: truth.gdb.systemMem + truth.gdb.mmappedMem}})
    expect(a.remainder).toBe(0)
    expect(a.lines.reduce((n: number, l: {bytes: number}) => n + l.bytes, 0)).toBe(a.mapped.bytes)
    // The arena's bytes left the anonymous mappings' line: no mapping listed holds them.
    const line2 = a.lines.find((l: {part: string}) => l.part === 'other anonymous mappings')
    expect(a.anonymousMappings.reduce((n: number, m: {bytes: number}) => n + m.bytes, 0)).toBe(line2.bytes)

    const text = await toma(['memory'])
    expect(text).toContain(`glibc malloc, main arena: ${((mi.arena + mi.hblkhd) / 1024).toFixed(1)} KiB (main_arena at ${truth.gdb.mainArena} (libc.so.6's data, by its structure))`)
    expect(text).toMatch(new RegExp(`^free in threads' tcaches +${truth.gdb.tcacheBytes.toLocaleString('en-US')} +[\\d.]+ % +${truth.gdb.tcacheChunks}`, 'm'))
  })

  it('names the TLS variable and the live heap block that alone point into two mappings', async () => {
    const a = JSON.parse(await toma(['memory', '--json'])).accounting
    type Mapping = {mapping: string; anchors: Array<{address: number; label: string; pointsAt: number}>}
    const of = (r: {start: string; end: string}) => (a.anonymousMappings as Mapping[]).find(m => m.mapping === `${r.start}-${r.end}`)!
    expect(of(truth.tlsRegion).anchors).toEqual([{address: Number(truth.tlsRegion.anchor), label: 'tls_region+0x0 (TLS of glibcheap)', pointsAt: 0}])
    const held = of(truth.heldRegion).anchors
    expect(held).toHaveLength(1)
    expect(held[0]).toMatchObject({address: Number(truth.heldRegion.holder) + truth.heldRegion.offset, pointsAt: 0})
    expect(held[0]!.label).toMatch(new RegExp(`^block ${truth.heldRegion.holder}\\+0x${truth.heldRegion.offset.toString(16)} \\(\\d+ B, unnamed\\)$`))
  })

  it('the report\'s section has glibc\'s parts and the mappings\' anchors', async () => {
    const out = path.join(work, 'report.html')
    await toma(['report', '-o', out])
    const page = fs.readFileSync(out, 'utf8')
    const section = page.slice(page.indexOf('id="section-memory"'))
    expect(section.length).toBeLessThan(page.length)
    const glibc = section.slice(section.indexOf('id="memory-other-0"'))
    expect(glibc.length).toBeLessThan(section.length)
    expect(glibc).toMatch(new RegExp(`free in threads&#39; tcaches</td><td[^>]*>${truth.gdb.tcacheBytes.toLocaleString('en-US')}<`))
    const anonymous = section.slice(section.indexOf('id="memory-anonymous"'))
    expect(anonymous.length).toBeLessThan(section.length)
    expect(anonymous).toContain('tls_region+0x0 (TLS of glibcheap), pointing at +0x0')
    expect(anonymous).toContain(`block ${truth.heldRegion.holder}+0x${truth.heldRegion.offset.toString(16)} (`)
  })
})

describe('toma memory: glibc\'s heap in pieces is refused, not guessed (glibcheap, pieces)', () => {
  let work: string
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'pieces.truth.json'), 'utf8')) as Truth

  beforeAll(() => {
    work = testTemp('toma-glibcheap-pieces-')
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('says why the arena is not walked, still splits out the chunk glibc mapped on its own, and the lines add up', async () => {
    // TCMalloc took 2 MiB from the break between glibc's two sbrk calls: system_mem counts them (mallinfo2's arena).
    expect(truth.pieces).toBe(true)
    const core = await brotliCorePath(path.join(DIR, 'pieces.core.br'))
    const r = await runToma(['memory', core, '--exe', path.join(DIR, 'glibcheap'), '--tcmalloc', TCMALLOC, '--index', path.join(work, 'core.toma-index'), '--json'], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    const a = JSON.parse(r.stdout).accounting
    const glibc = a.otherAllocators[0]
    const mapped = truth.blocks.filter(b => b.state === 'live' && b.usable + 16 === truth.mallinfo2.hblkhd)
    expect(mapped).toHaveLength(1)
    expect(glibc.ranges).toEqual([{start: Number(mapped[0]!.address) - 16, end: Number(mapped[0]!.address) - 16 + truth.mallinfo2.hblkhd}])
    expect(glibc.parts).toEqual([{part: 'mmapped chunks (each its own mapping, in use)', bytes: truth.mallinfo2.hblkhd, blocks: truth.mallinfo2.hblks}])
    expect(glibc.notes).toHaveLength(1)
    expect(glibc.notes[0]).toMatch(new RegExp(`^its heap ${truth.gdb.sbrkBase}-${truth.sbrk0} \\(sbrk_base to the top chunk's end\\) holds the heap model's span at 0x[0-9a-f]+: something else moved the break between glibc's calls, its heap is in pieces, and it is not walked$`))
    expect(a.remainder).toBe(0)
    expect(a.lines.reduce((n: number, l: {bytes: number}) => n + l.bytes, 0)).toBe(a.mapped.bytes)
  })
})
