import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {analyzeHeap} from '../../src/tcmalloc/heap.js'
import {IN_USE} from '../../src/tcmalloc/spans.js'
import {LISTED_PER_PHASE} from '../../src/queries/warning-report.js'
import {cutSegmentHolding, writeWords} from '../helpers/cut-segment.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Reproduction 3 of issue 8: a thread stack's bytes missing from the core must be a printed
// warning (phase roots, with its address), the report must not say "consistent", and --strict
// must exit with its own code.
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
let work: string
let clean: string
let cut: string
let truth: Truth
let stack: [number, number]
const flags = () => {
  const f = fixtureFlags(entry)
  return ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
}

beforeAll(async () => {
  work = testTemp('toma-honest-')
  truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.id, 'truth.json'), 'utf8'))
  clean = path.join(work, 'clean.core')
  cut = path.join(work, 'cut.core')
  fs.copyFileSync(await fixtureCorePath(entry.id), clean)
  fs.copyFileSync(clean, cut)
  // The worker whose stack alone holds a manifest object (workerStackBox).
  const held = truth.objects.find(o => o.heldBy?.kind === 'stack' && truth.threads.find(t => t.tid === (o.heldBy as {tid: number}).tid)?.role === 'worker')!
  const tid = (held.heldBy as {tid: number}).tid
  const rsp = Core.open(clean).threads.find(t => t.tid === tid)!.sp
  stack = cutSegmentHolding(cut, rsp)
})

afterAll(() => fs.rmSync(work, {recursive: true, force: true}))

it('a clean fixture core with its files is consistent, and --strict exits 0', async () => {
  const r = await runToma(['analyze', clean, ...flags(), '--strict', '--index', path.join(work, 'clean.idx')], {cwd: work})
  expect(r.status, r.stderr).toBe(0)
  expect(r.stdout).toContain('Warnings (0)')
  expect(r.stdout).toContain('none: every list and counter is consistent')
})

it('a thread stack missing from the core: the roots warning is printed with its address, not "consistent"; --strict exits 3', async () => {
  const text = await runToma(['analyze', cut, ...flags(), '--index', path.join(work, 'cut.idx')], {cwd: work})
  expect(text.status, text.stderr).toBe(0)
  const line = text.stdout.split('\n').find(l => l.startsWith('[roots]'))
  expect(line).toBeDefined()
  const at = Number.parseInt(/ at (0x[0-9a-f]+)/.exec(line!)![1]!, 16)
  expect(at >= stack[0] && at < stack[1]).toBe(true) // the warning's address is in the cut stack
  expect(line).toContain('not in the core')
  expect(text.stdout).not.toContain('every list and counter is consistent')
  expect(text.stdout).toMatch(/not consistent: \d+ warnings? \(.*roots/)

  const strict = await runToma(['analyze', cut, ...flags(), '--strict', '--json', '--index', path.join(work, 'cut.idx')], {cwd: work})
  expect(strict.status, strict.stderr).toBe(3)
  const json = JSON.parse(strict.stdout)
  expect(json.warnings.consistent).toBe(false)
  expect(json.warnings.byPhase.roots).toBeGreaterThan(0)
  const w = json.warnings.list.find((x: {phase: string}) => x.phase === 'roots')
  expect(w.addresses).toContain(`0x${at.toString(16)}`)
  // The object only that stack held is now reported as unreachable: the warning explains it.
  const cleanJson = JSON.parse((await runToma(['analyze', clean, ...flags(), '--json', '--index', path.join(work, 'clean.idx')], {cwd: work})).stdout)
  expect(json.graph.unreachable.objects).toBeGreaterThan(cleanJson.graph.unreachable.objects)
})

it('a flood of page-map warnings is listed up to the limit and counted past it, and every other phase is still listed', async () => {
  // 120 page-map entries (the first page of 120 in-use spans) overwritten with a pointer to nothing.
  const clean = analyzeHeap(Program.load(Core.open(cut), fixtureFlags(entry)))
  const s = clean.spans
  const layout = clean.globals.layout
  if (layout.pageMap.kind !== 2) throw new Error('expects PageMap2')
  const core = Core.open(cut)
  const bogus = 0x7ff0_dead_b000
  const victims = [...Array(s.count).keys()].filter(i => s.location[i] === IN_USE).slice(0, 120)
  expect(victims).toHaveLength(120)
  const entries = victims.map(i => {
    const page = s.start[i]! / layout.pageSize
    const leaf = core.memory.readU64(clean.globals.pageHeap + layout.pageHeap.pagemap + Math.floor(page / 2 ** layout.pageMap.leafBits) * 8)!
    return leaf + (page % 2 ** layout.pageMap.leafBits) * 8
  })
  const flooded = path.join(work, 'flooded.core')
  fs.copyFileSync(cut, flooded)
  writeWords(flooded, a => core.memory.segmentAt(a), entries.map(e => [e, bogus]))
  core.close()

  const r = await runToma(['analyze', flooded, ...flags(), '--json', '--index', path.join(work, 'flooded.idx')], {cwd: work})
  expect(r.status, r.stderr).toBe(0)
  const w = JSON.parse(r.stdout).warnings
  expect(w.byPhase['page map']).toBeGreaterThanOrEqual(120)
  const listed = (phase: string) => w.list.filter((x: {phase: string}) => x.phase === phase).length
  expect(listed('page map')).toBe(LISTED_PER_PHASE)
  expect(w.omitted['page map']).toBe(w.byPhase['page map'] - LISTED_PER_PHASE)
  // The cut stack's warning and the unequal cross-check figures are not hidden by the flood.
  expect(listed('roots')).toBe(w.byPhase.roots)
  expect(listed('cross-check')).toBeGreaterThan(0)
  expect(w.total).toBe(Object.values(w.byPhase as Record<string, number>).reduce((a, b) => a + b, 0))
  const text = await runToma(['analyze', flooded, ...flags(), '--index', path.join(work, 'flooded.idx')], {cwd: work})
  expect(text.stdout).toContain(`[page map] … and ${w.omitted['page map'].toLocaleString('en-US')} more not listed`)
  expect(text.stdout.split('\n').filter(l => l.startsWith('[page map] span')).length).toBe(LISTED_PER_PHASE)
})
