import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {brotliCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 29: a C heap (no types) whose memory is 96 % 1 MiB slab pages held through a global array,
// like memcached's (fixtures/slabcache/README.md). Untyped blocks are grouped by size and holder;
// suspects and top --by type name the pages and their holder first, leaks says its blocks once.
// Every expected value is what the process recorded about itself (truth.json).

const DIR = fileURLToPath(new URL('../../fixtures/slabcache', import.meta.url))
const TCMALLOC = fileURLToPath(new URL('../../fixtures/cores/v2.10-minimal/libtcmalloc_minimal.so.4', import.meta.url))

interface SlabTruth {
  counters: Record<string, number>
  symbols: {slabclassEntryBytes: number; slabListOffset: number; conn_arena: string}
  slabClasses: Array<{slabList: string; slabListBytes: number; pages: string[]}>
  slabPages: {count: number; bytesEach: number; bytes: number}
  hashtable: {address: string; bytes: number}
  arena: {start: string; end: string; firstPointerOffset: number; objects: number; bytesEach: number; bytes: number}
  worker: {tid: number; function: string; buffer: string; bytes: number}
  leaked: {count: number; addresses: string[]; bytes: number}
  slabListBytes: number
}

interface Group {
  size: number
  objects: number
  bytes: number
  retainedBytes: number
  holder: {kind: string; name: string; module?: string; anchors?: string[]}
  offsets: number[]
  entries: {stride: number; field: number} | null
  example: {address: string}
  share: number
}

describe('untyped blocks grouped by size and holder (slabcache)', () => {
  let work: string
  let indexPath: string
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as SlabTruth
  const toma = async (args: string[]) => {
    const r = await runToma([...args, indexPath], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    return r.stdout
  }
  const json = async (args: string[]) => JSON.parse(await toma([...args, '--json']))
  const pages = truth.slabClasses.flatMap(c => c.pages)

  beforeAll(async () => {
    work = testTemp('toma-untyped-')
    indexPath = path.join(work, 'core.toma-index')
    const core = await brotliCorePath(path.join(DIR, 'core.br'))
    const a = await runToma(['analyze', core, '--exe', path.join(DIR, 'slabcache'), '--tcmalloc', TCMALLOC, '--index', indexPath, '--json'], {cwd: work})
    expect(a.status, a.stderr).toBe(0)
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  /** The slab pages' group as the process recorded them: 59 × 1 MiB, held by slabclass[i].slab_list. */
  const expectSlabPages = (g: Group) => {
    expect(g.size).toBe(truth.slabPages.bytesEach)
    expect(g.objects).toBe(truth.slabPages.count)
    expect(g.bytes).toBe(truth.slabPages.bytes)
    // The pages hold no pointers to other blocks: they retain themselves only.
    expect(g.retainedBytes).toBe(truth.slabPages.bytes)
    expect(g.holder).toMatchObject({kind: 'global', name: 'slabclass', module: 'slabcache'})
    // Each class's slab_list (at +0x18 in its 48-byte entry) holds its pages.
    expect(g.entries).toEqual({stride: truth.symbols.slabclassEntryBytes, field: truth.symbols.slabListOffset})
    expect(pages).toContain(g.example.address)
  }

  it('suspects: the slab pages are the first suspect, with their holder, though no single object passes 10 %', async () => {
    const s = await json(['suspects'])
    // No one class's slab_list retains 10 % (5 pages of 59): before issue 29 this said "no suspect".
    expect(s.singles).toEqual([])
    expectSlabPages(s.blocks[0])
    expect(s.blocks[0].share).toBeCloseTo(truth.slabPages.bytes / s.liveBytes, 10)
    expect(s.blocks[0].share).toBeGreaterThan(0.96)
    // The slab_list arrays: one per class, 128 B, also under slabclass (they retain the pages not held elsewhere too).
    const lists = s.blocks.find((b: Group) => b.size === 128)
    expect(lists).toMatchObject({objects: truth.slabClasses.length, bytes: truth.slabListBytes, holder: {kind: 'global', name: 'slabclass'}})
    expect(truth.slabClasses.map(c => c.slabList)).toContain(lists.example.address)

    const text = await toma(['suspects'])
    const first = text.split('\n').find(l => l.startsWith('Suspect 1:'))
    expect(first).toBe(`Suspect 1: ${truth.slabPages.count} × 1 MiB blocks (untyped) held by slabclass[i]+0x18 (global in slabcache, entries of 0x30 bytes) retain 59.0 MiB (${(s.blocks[0].share * 100).toFixed(1)}%) in ${truth.slabPages.count} objects`)
  })

  it('top --by type: the slab pages first; the arena, the frame-held buffer and the hash table under their holders', async () => {
    const t = await json(['top', '--by', 'type', '--limit', '1000'])
    expect(t.types[0].type).toBeNull()
    expectSlabPages(t.types[0].blocks)
    const groups: Group[] = t.types.filter((r: {blocks?: Group}) => r.blocks).map((r: {blocks: Group}) => r.blocks)

    // 20,000 connection records whose only pointers lie in the mapping at +0x40 on: one holder, anchored by the global conn_arena.
    const arena = groups.find(g => g.holder.kind === 'mapping')!
    expect(arena).toMatchObject({size: truth.arena.bytesEach, objects: truth.arena.objects, bytes: truth.arena.bytes, retainedBytes: truth.arena.bytes})
    expect(arena.holder.name).toBe(`anonymous mapping ${truth.arena.start}-${truth.arena.end}`)
    expect(arena.offsets[0]).toBe(truth.arena.firstPointerOffset)
    // A word apart, the offsets are not said to be an array's field (they may be neighbouring fields).
    expect(arena.offsets).toEqual(Array.from({length: 8}, (_, i) => truth.arena.firstPointerOffset + 8 * i))
    expect(arena.entries).toBeNull()
    expect(arena.holder.anchors).toEqual(['conn_arena+0x0 (slabcache), pointing at +0x0'])

    // The read buffer only worker_main's frame points to.
    const frame = groups.find(g => g.holder.kind === 'frame')!
    expect(frame).toMatchObject({size: truth.worker.bytes, objects: 1, example: {address: truth.worker.buffer}})
    expect(frame.holder.name).toMatch(new RegExp(`^thread ${truth.worker.tid} #\\d+ ${truth.worker.function}\\+`))

    const hash = groups.find(g => g.example.address === truth.hashtable.address)!
    expect(hash).toMatchObject({size: truth.hashtable.bytes, objects: 1, holder: {kind: 'global', name: 'primary_hashtable'}, offsets: [0]})

    // The leaked buffers are one row too.
    expect(groups.find(g => g.holder.kind === 'leaked')).toMatchObject({objects: truth.leaked.count, bytes: truth.leaked.bytes})

    const text = await toma(['top', '--by', 'type'])
    expect(text.split('\n')[3]).toMatch(/^59 × 1 MiB blocks \(untyped\) held by slabclass\[i\]\+0x18 \(global in slabcache, entries of 0x30 bytes\) +61,865,984 +59 +98\.\d% +holder$/)
    expect(text).toContain(`20,000 × 32 B blocks (untyped) held by anonymous mapping ${truth.arena.start}-${truth.arena.end} (at +0x40, +0x48, `)
    expect(text).toContain('; anchored by conn_arena+0x0 (slabcache), pointing at +0x0')
  })

  it('memory: splits the other anonymous mappings per mapping and names the global the process keeps the arena in', async () => {
    // Issue 53 item 1. The arena is the process's mmap at truth.arena; its address is kept in conn_arena (truth.symbols, the process's own &conn_arena).
    const a = (await json(['memory'])).accounting
    const mappings: Array<{mapping: string; bytes: number; inCore: number; anchors: Array<{address: number; label: string; pointsAt: number}>}> = a.anonymousMappings
    const line = a.lines.find((l: {part: string}) => l.part === 'other anonymous mappings')
    expect(mappings.reduce((n, m) => n + m.bytes, 0)).toBe(line.bytes)
    expect(mappings.reduce((n, m) => n + m.inCore, 0)).toBe(line.inCore)
    const arena = mappings.find(m => m.mapping === `${truth.arena.start}-${truth.arena.end}`)!
    expect(arena.bytes).toBe(Number(truth.arena.end) - Number(truth.arena.start))
    expect(arena.anchors).toEqual([{address: Number(truth.symbols.conn_arena), label: 'conn_arena+0x0 (slabcache)', pointsAt: 0}])
    expect(await toma(['memory', '--rows', '100'])).toMatch(new RegExp(`^${truth.arena.start}-${truth.arena.end} +262,144 +262,144 +conn_arena\\+0x0 \\(slabcache\\), pointing at \\+0x0$`, 'm'))
    expect(mappings.length).toBeGreaterThan(1)
    // Everything went through TCMalloc: glibc's main arena was never initialised, so no other allocator is said to be there.
    expect(a.otherAllocators).toEqual([])
    expect(await toma(['memory', '--rows', '1'])).toContain(`… ${mappings.length - 1} more mappings (--json lists them all)`)
  })

  it('leaks: the 40 buffers once, grouped by size and holder, not repeated as the largest', async () => {
    const l = await json(['leaks'])
    expect(l.objects).toBe(truth.leaked.count)
    expect(l.bytes).toBe(truth.leaked.bytes)
    expect(l.starts.map((s: {address: string}) => s.address).sort()).toEqual([...truth.leaked.addresses].sort())
    expect(l.untypedGroups).toHaveLength(1)
    expect(l.untypedGroups[0]).toMatchObject({size: 320, objects: truth.leaked.count, bytes: truth.leaked.bytes, holder: {kind: 'leaked'}})

    const text = await toma(['leaks'])
    expect(text).not.toContain('Largest')
    expect(text).toContain(`${truth.leaked.count} × 320 B blocks (untyped) held by nothing: leaked`)
    const listing = text.split('Leads:')[0]!
    for (const a of truth.leaked.addresses) expect(listing.split(a).length - 1, a).toBe(1)

    // The HTML report: the same, and the slab pages as the suspects' first table.
    const out = path.join(work, 'report.html')
    await toma(['report', '-o', out])
    const page = fs.readFileSync(out, 'utf8')
    expect(page).not.toContain('Largest leaked objects')
    const suspects = page.slice(page.indexOf('id="section-suspects"'))
    expect(suspects.length).toBeLessThan(page.length)
    expect(suspects).toContain('59 × 1 MiB blocks (untyped) held by slabclass[i]+0x18')
    const leaks = page.slice(page.indexOf('id="section-leaks"'))
    expect(leaks.length).toBeLessThan(page.length)
    for (const a of truth.leaked.addresses) expect(leaks.split(`<code>${a}</code>`).length - 1, a).toBe(1)
  })
})
