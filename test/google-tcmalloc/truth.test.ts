import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {analyzeGoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {DWARF_FAMILY} from '../../src/google-tcmalloc/layout-from-dwarf.js'
import {THREAD_CACHE} from '../../src/heap/states.js'
import {Program} from '../../src/program/program.js'
import {sparseCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {checkCacheOwners, checkClassCounts, checkCounters, checkLiveObjects, checkSampled, checkStateBytes, type GoogleTruth} from './truth-checks.js'

/** The google/tcmalloc fixtures (fixtures/README.md, "google/tcmalloc"): cores of gtcdemo with the process's own figures. */
const DIR = fileURLToPath(new URL('../../fixtures/google-tcmalloc', import.meta.url))
/**
 * The DWARF the committed executables lost (strip --strip-debug), as separate debug files by
 * build-id (fixtures/generate-google-tcmalloc.sh): what a user passes as --debug-file-directory.
 */
const DEBUG_DIR = path.join(DIR, 'debug')

interface Row {
  id: string
  /** How it was built (build.json's mode): `debug`, or `release` (-DNDEBUG, as releases ship). */
  mode: 'debug' | 'release'
  snapshot: string
  pageKiB: number
  perCpu: boolean
  exe: string
}

/** The layout family toma must tell for each fixture's snapshot (docs/GOOGLE-TCMALLOC.md, "Families"). */
const FAMILY_OF_SNAPSHOT: Record<string, string> = {
  fce3f55de93a0dd7611990d9bfcf96db426e01dc: '2026-08',
  // Google's 20230227 snapshot (MongoDB's mongo-20230227)
  '093ba93c1bd6dca03b0a8334f06d01b019244291': '2023-02',
  // a commit after the packed page map (da43087), before PageMap3
  '9535b58471d473eea23c34461f019ea129254297': '2025-06',
  // YDB's pin (256 KiB pages)
  c8dfee3e4c489c5ae0d30c484c92db102a69ec51: '2025-01',
  // Envoy's pin
  '5da4a882003102fba0c0c0e8f6372567057332eb': '2024-12',
  // mongodb-forks/tcmalloc tag mongo-20240522 (MongoDB 8.0)
  '35d8ff1888e87d69a2cde41ec11a863bfb5eef21': 'mongo-20240522',
  // a commit between 2025-06 and 2026-08 that no family of the table covers: read through its DWARF
  f6a8ba373e4470da604888b743ea514e59df81ec: DWARF_FAMILY,
  // another, whose span records read as mongo-20240522's while its per-CPU cache and back end moved
  e3017622630be669761920d0f8a11cc25f2acd0d: DWARF_FAMILY,
}

const rows: Row[] = fs.existsSync(path.join(DIR, 'index.json')) ? JSON.parse(fs.readFileSync(path.join(DIR, 'index.json'), 'utf8')) : []

async function open(row: Row) {
  const corePath = await sparseCorePath(path.join(DIR, row.id, 'core.sparse.br'))
  const core = Core.open(corePath)
  const program = Program.load(core, {exe: path.join(DIR, row.id, row.exe), debugDirectories: [DEBUG_DIR]})
  const truth = JSON.parse(fs.readFileSync(path.join(DIR, row.id, 'truth.json'), 'utf8')) as GoogleTruth
  return {core, program, truth, heap: analyzeGoogleHeap(program)}
}

/**
 * Each core opened and modelled once for the file (an unpack and a model are 5 s and more): every
 * test that reads the model of a row shares it, and none changes it; the cores close at the end.
 */
const openedRows = new Map<string, ReturnType<typeof open>>()
const opened = (row: Row) => {
  let o = openedRows.get(row.id)
  if (!o) openedRows.set(row.id, (o = open(row)))
  return o
}
afterAll(async () => {
  for (const o of openedRows.values()) (await o).core.close()
})

describe('google/tcmalloc fixtures are there', () => {
  it('has cores of per-CPU and per-thread mode', () => {
    expect(rows.some(r => r.perCpu)).toBe(true)
    expect(rows.some(r => !r.perCpu)).toBe(true)
  })

  it('has a core whose large blocks a HugeRegion serves, by the process\'s own stats', () => {
    const withRegions = rows.filter(r => /HugeRegionSet: [1-9]\d* total regions/.test((JSON.parse(fs.readFileSync(path.join(DIR, r.id, 'truth.json'), 'utf8')) as {stats: string}).stats))
    expect(withRegions.map(r => r.id)).toContain('gtc-2026-08-release-regions-sharded-percpu')
  })

  it('has release builds (-DNDEBUG) beside debug builds, of both page sizes, both cache modes', () => {
    const release = rows.filter(r => r.mode === 'release')
    expect(new Set(release.map(r => r.pageKiB))).toEqual(new Set([8, 256]))
    expect(new Set(release.map(r => r.perCpu))).toEqual(new Set([true, false]))
    expect(rows.every(r => r.mode === 'release' || r.mode === 'debug')).toBe(true)
  })
})

describe.each(rows.map(r => [r.id, r] as const))('google/tcmalloc model on %s', (_id, row) => {
  const shared = () => opened(row)

  it('tells the family, the page size and the cache mode', async () => {
    const {truth, heap} = await shared()
    expect(heap.layout.family).toBe(FAMILY_OF_SNAPSHOT[row.snapshot])
    // Where the build mode moves the records (2026-08 on), the layout told is of the fixture's mode.
    expect(heap.layout.build ?? row.mode).toBe(row.mode)
    expect(heap.pageSize).toBe(2 ** truth.pageShift)
    expect(heap.pageSize).toBe(row.pageKiB * 1024)
    expect(heap.perCpuActive).toBe(truth.perCpuActive)
  })

  it("reads the layout from the build's DWARF where its debug file is installed, and it is the table's", async () => {
    const {program, heap} = await shared()
    if (!program.executable?.debug) {
      // Only the 2026-08 debug builds, made before debug files were kept, have none.
      expect(row.mode).toBe('debug')
      expect(heap.how).toMatch(/^family /)
      return
    }
    expect(program.executable.debug.how).toBe('build-id')
    // The table's family and the DWARF agree on every field (else a warning, which the next test forbids).
    if (heap.layout.family === DWARF_FAMILY) expect(heap.how).toMatch(/^layout from the DWARF of .*\.debug, which no family of the table covers /)
    else expect(heap.how).toMatch(new RegExp(`^layout from the DWARF of .*\\.debug, the same as the table's family ${heap.layout.family}[ (]`))
  })

  it("counts every state's bytes as the process's own properties do", async () => {
    const {truth, heap} = await shared()
    checkStateBytes(heap, truth)
  })

  it("finds each object the program holds live, at its start, at least its allocated size", async () => {
    const {truth, heap} = await shared()
    checkLiveObjects(heap, truth)
  })

  it('reads every sampled allocation with the size the program asked for', async () => {
    const {truth, heap} = await shared()
    checkSampled(heap, truth)
  })

  it('says which CPU or thread cache holds each cached object', async () => {
    const {heap} = await shared()
    checkCacheOwners(heap)
  })

  it("agrees with tcmalloc's own counters in the core: each huge cache's size_, each thread cache's size_", async () => {
    const {heap, truth} = await shared()
    checkCounters(heap, truth)
  })
})

describe('toma on a google/tcmalloc core', () => {
  const row = rows.find(r => r.perCpu)
  it.runIf(row)('analyzes it, names its vtable objects, and exports its graph as any other', async () => {
    const work = testTemp('gtc-cli')
    const core = await sparseCorePath(path.join(DIR, row!.id, 'core.sparse.br'))
    const exe = path.join(DIR, row!.id, row!.exe)
    const index = path.join(work, 'core.idx')
    const truth = JSON.parse(fs.readFileSync(path.join(DIR, row!.id, 'truth.json'), 'utf8')) as GoogleTruth
    const analyzed = await runToma(['analyze', core, '--exe', exe, '--index', index, '--json'], {cwd: work})
    expect(analyzed.stderr).toBe('')
    expect(analyzed.status).toBe(0)
    const summary = JSON.parse(analyzed.stdout) as {allocator: {kind: string; version: string; pageSize: number}; states: Record<string, {bytes: number}>}
    expect(summary.allocator).toMatchObject({kind: 'google/tcmalloc', version: FAMILY_OF_SNAPSHOT[row!.snapshot], pageSize: row!.pageKiB * 1024})
    await checkClassCounts(core, index, truth, work)
    const out = path.join(work, 'graph.json')
    expect((await runToma(['export', core, '--index', index, '--format', 'json', '-o', out], {cwd: work})).status).toBe(0)
    const graph = JSON.parse(fs.readFileSync(out, 'utf8')) as {allocator: {kind: string}}
    expect(graph.allocator.kind).toBe('google/tcmalloc')
    // An object in a CPU's slab: find-object names the CPU whose cache holds it, as the model does.
    const {heap} = await opened(row!)
    const at = heap.threadCacheObjects.findIndex((_, i) => heap.frontCaches[heap.threadCacheOwner[i]!]!.cpu !== null)
    const slot = heap.threadCacheObjects[at]!
    const cpu = heap.frontCaches[heap.threadCacheOwner[at]!]!.cpu
    const s = heap.spans.start.findIndex((_, i) => slot >= heap.spans.firstObject[i]! && slot < heap.spans.firstObject[i]! + heap.spans.objectCount[i]!)
    const address = heap.spans.start[s]! + (slot - heap.spans.firstObject[s]!) * heap.spans.objectSize[s]!
    const found = await runToma(['find-object', `0x${address.toString(16)}`, index, '--json'], {cwd: work})
    expect(found.status).toBe(0)
    expect((JSON.parse(found.stdout) as {object: {state: string; thread: {cpu: number | null}}}).object).toMatchObject({state: 'thread-cache', thread: {cpu}})
    const text = await runToma(['find-object', `0x${address.toString(16)}`, index], {cwd: work})
    expect(text.stdout).toContain(`CPU ${cpu}'s cache`)
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)
})

describe.each(rows.map(r => [r.id, r] as const))('google/tcmalloc from the core alone, %s', (_id, row) => {
  it('finds the globals by their signatures and gives the same heap', async () => {
    const {core, heap} = await opened(row)
    const bare = Program.load(core, {exe: path.join(DIR, row.id, row.exe)})
    for (const m of bare.modules) m.file = null
    if (heap.layout.family === DWARF_FAMILY) {
      // No table entry covers this commit: without its DWARF it is refused, naming the family
      // whose span records read alike and the globals that are not where that family puts them.
      expect(() => analyzeGoogleHeap(bare)).toThrow(/^google\/tcmalloc's page map at 0x[0-9a-f]+ (reads as family .* but these globals are not where that layout puts them|names no span under any known layout)/)
      return
    }
    const alone = analyzeGoogleHeap(bare)
    for (const name of ['pageMap', 'sizeMap', 'transferCache', 'pageAllocator'] as const) {
      expect(alone.globals.how[name], name).toBe('signature')
      expect(alone.globals.at[name], name).toBe(heap.globals.at[name])
    }
    if (heap.perCpuActive) expect(alone.globals.at.cpuCache).toBe(heap.globals.at.cpuCache)
    // Per-thread caches are found by their lists: where any holds an object, the same list head.
    if (heap.totals.bytes[THREAD_CACHE]! > 0 && !heap.perCpuActive) expect(alone.globals.at.threadHeaps).toBe(heap.globals.at.threadHeaps)
    expect(Array.from(alone.totals.bytes)).toEqual(Array.from(heap.totals.bytes))
    expect(Array.from(alone.state)).toEqual(Array.from(heap.state))
  })
})

describe('a google/tcmalloc core of a layout toma does not know', () => {
  // A family other than the core's own stands in for a snapshot toma has no layout of: the page
  // map then names no span under any layout tried, and toma says so in one line.
  const row = rows.find(r => FAMILY_OF_SNAPSHOT[r.snapshot] !== '2026-08') ?? rows.find(r => FAMILY_OF_SNAPSHOT[r.snapshot] === '2026-08')
  it.runIf(row)('is one clear line on stderr and a non-zero exit, never a figure', async () => {
    const work = testTemp('gtc-unknown')
    const own = FAMILY_OF_SNAPSHOT[row!.snapshot]
    const other = own === '2026-08' ? 'mongo-20240522' : '2026-08'
    const core = await sparseCorePath(path.join(DIR, row!.id, 'core.sparse.br'))
    const r = await runToma(['analyze', core, '--exe', path.join(DIR, row!.id, row!.exe), '--tcmalloc-version', other, '--index', path.join(work, 'x.idx')], {cwd: work})
    expect(r.status).not.toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(new RegExp(`names no span under any known layout \\(families ${other} `))
    expect(fs.existsSync(path.join(work, 'x.idx'))).toBe(false)
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)

  // Families whose span records read alike (2024-12 and 2025-06 where pointers are not packed;
  // mongo-20240522 and 2024-12) differ in where the globals are: a family forced on the wrong
  // core is refused on them, in one line.
  const alike = [
    ['2024-12', '2025-06'],
    ['mongo-20240522', '2024-12'],
  ]
    .map(([own, other]) => [rows.find(r => FAMILY_OF_SNAPSHOT[r.snapshot] === own), other] as const)
    .filter((p): p is readonly [Row, string] => p[0] !== undefined)
  it.each(alike.map(([r, other]) => [r.id, other, r] as const))('%s read as family %s: one line naming the globals that do not fit', async (_id, other, r) => {
    const work = testTemp('gtc-alike')
    const core = await sparseCorePath(path.join(DIR, r.id, 'core.sparse.br'))
    const run = await runToma(['analyze', core, '--exe', path.join(DIR, r.id, r.exe), '--tcmalloc-version', other, '--index', path.join(work, 'x.idx')], {cwd: work})
    expect(run.status).not.toBe(0)
    expect(run.stdout).toBe('')
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toMatch(new RegExp(`reads as family ${other} with 8 KiB pages, but these globals are not where that layout puts them: (.*, )?page allocator \\(normal_impl_\\[0\\]\\)`))
    expect(fs.existsSync(path.join(work, 'x.idx'))).toBe(false)
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)
})
