import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {hex} from '../../src/errors.js'
import {escapeHtml} from '../../src/report/html/html.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {childrenBySize, childrenPage} from '../../src/queries/dominated.js'
import {allocationOfSpan} from '../../src/queries/allocations.js'
import {pointingWords} from '../../src/queries/object-info.js'
import {pathsTo} from '../../src/queries/paths.js'
import {storedHolderName} from '../../src/queries/holder-groups.js'
import {SampleIndex} from '../../src/index/sample-index.js'
import {objectHref} from '../../src/serve/links.js'
import {BadParameter} from '../../src/serve/params.js'
import {dominatedJsonPage} from '../../src/serve/pages/dominated-json.js'
import {dominatorsPage} from '../../src/serve/pages/dominators.js'
import {objectPage} from '../../src/serve/pages/object.js'
import type {DominatedPage} from '../../src/serve/dominated-rows.js'
import {PAGE_ROWS, type PageAnswer, type ServeContext, type ServePage} from '../../src/serve/serve-page.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, brotliCorePath} from '../helpers/fixture-core.js'
import {closeServed, servedCore, servedDemo} from '../helpers/served-core.js'
import {DIR as NAMES_DIR} from '../naming/namesdemo.js'
import {fileURLToPath} from 'node:url'

// toma serve's object page, dominator tree and its JSON, answered in process on fixture cores and
// held against the index's own answers (refs, paths, dominator children) and the core's bytes.

async function answer(ctx: ServeContext, page: ServePage, url: string): Promise<PageAnswer> {
  return page.answer(ctx, new URL(`http://test${url}`))
}

async function pageText(ctx: ServeContext, url: string): Promise<string> {
  const a = await answer(ctx, objectPage, url)
  if (a.kind !== 'page') throw new Error(`${url}: ${a.kind} ${a.kind === 'missing' ? a.message : ''}`)
  return a.body.text
}

function section(text: string, id: string): string {
  const at = text.indexOf(`<section id="object-${id}">`)
  if (at < 0) return ''
  return text.slice(at, text.indexOf('</section>', at))
}

/** A dump's lines (tags gone) as the offset each starts at, whether it is marked, and its bytes. */
function dumpLines(text: string): Array<{offset: number; marked: boolean; bytes: Buffer}> {
  const pre = /<pre class="hexdump">([\s\S]*?)<\/pre>/.exec(text)![1]!.replace(/<[^>]+>/g, '')
  return pre.split('\n').filter(Boolean).map(line => {
    const m = /^(.) +\+0x([0-9a-f]+)  /.exec(line)!
    return {offset: parseInt(m[2]!, 16), marked: m[1] === '→', bytes: Buffer.from(line.slice(m[0].length, m[0].length + 48).replace(/ /g, ''), 'hex')}
  })
}

/** The first object link of each table row of a table (`id`): the other object's address. */
function rowTargets(text: string, id: string): Array<{address: string; offsets: string[]}> {
  const at = text.indexOf(`<table id="${id}">`)
  if (at < 0) return []
  const table = text.slice(at, text.indexOf('</table>', at))
  return [...table.matchAll(/<tr><td>(.*?)<\/td><td class="n">(.*?)<\/td><td class="n">(.*?)<\/td><\/tr>/g)].map(m => ({
    address: /addr=(0x[0-9a-f]+)/.exec(m[1]!)?.[1] ?? 'itself',
    offsets: [m[2]!, m[3]!],
  }))
}

const off = (n: number) => `+0x${n.toString(16)}`

describe('the object page on fixtures/demo', () => {
  let ctx: ServeContext
  let retention: RetentionIndex
  beforeAll(async () => {
    ctx = await servedDemo()
    retention = new RetentionIndex(ctx.core.index)
  })
  afterAll(() => closeServed(ctx))

  const live = () => {
    const index = ctx.core.index
    return Array.from({length: index.objectCount}, (_, i) => i).filter(i => index.state(i) === 'live')
  }

  it('shows a typed object: its name with its tier and class, reachability, retained size, dominator', async () => {
    const index = ctx.core.index
    const typeId = index.meta.typeNames.indexOf('app::Registry') + 1
    expect(typeId).toBeGreaterThan(0)
    const slot = live().find(i => index.typeId(i) === typeId)!
    const o = index.object(slot)
    // Any address inside the object finds it.
    const text = await pageText(ctx, objectHref(o.start + 8))
    expect(text).toContain(`<dt>address</dt><dd><code>${hex(o.start)}</code>`)
    expect(text).toContain(`is +0x8 inside it`)
    expect(text).toMatch(new RegExp(`<dt>type</dt><dd><a href="/class\\?id=${typeId}" class="class-link">app::Registry</a> <span class="dim">\\(${index.via(slot)}\\)</span>`))
    const r = retention.retained(slot)
    expect(text).toContain(`${r.bytes.toLocaleString('en-US')} B in ${r.objects.toLocaleString('en-US')} objects`)
    expect(text).toContain(`<dt>reachability</dt><dd>reached from a root</dd>`)
  })

  it('dumps the bytes the core holds, every pointer word a link to what it points to', async () => {
    const index = ctx.core.index
    const program = ctx.core.program()
    // The object with the most pointer words among the first live ones of 64 B or more.
    const slot = live().find(i => index.object(i).size >= 64 && index.outDegree(i) >= 4)!
    const o = index.object(slot)
    const text = await pageText(ctx, objectHref(o.start))
    const pre = /<pre class="hexdump">([\s\S]*?)<\/pre>/.exec(text)![1]!
    const shown = Buffer.concat(dumpLines(text).map(l => l.bytes))
    const n = Math.min(o.size, 4096)
    expect(shown.length).toBe(n)
    expect(shown.equals(program.core.memory.readBytes(o.start, n)!)).toBe(true)
    const words = pointingWords(program, index, shown, o.start, o.start)
    expect(words.length).toBeGreaterThanOrEqual(4)
    expect([...pre.matchAll(/<a href="([^"]+)"/g)].map(m => m[1])).toEqual(words.map(w => objectHref(Number(w.value)).replace(/&/g, '&amp;')))
    // Every name the page shows comes with the tier that gave it.
    const table = text.slice(text.indexOf('<h3>Pointer words'))
    const named = words.filter(w => w.slot !== undefined && index.type(w.slot) !== null)
    expect(named.length).toBeGreaterThan(0)
    for (const w of named) expect(table).toContain(`${escapeHtml(index.type(w.slot!)!)} <span class="dim tier">(${index.via(w.slot!)})</span>`)
  })

  it('dumps the bytes around an address deep inside a large object, its line marked', async () => {
    const index = ctx.core.index
    const slot = retention.top(1)[0]!
    const o = index.object(slot)
    expect(o.size).toBeGreaterThan(1 << 20)
    const at = (1 << 20) + 0x48
    const text = await pageText(ctx, objectHref(o.start + at))
    const lines = dumpLines(text)
    const from = lines[0]!.offset
    expect(from).toBe(at - 0x8 - 256)
    expect(lines.filter(l => l.marked).map(l => l.offset)).toEqual([at - 8])
    const shown = Buffer.concat(lines.map(l => l.bytes))
    expect(shown.equals(ctx.core.program().core.memory.readBytes(o.start + from, 4096)!)).toBe(true)
    expect(section(text, 'bytes')).toContain(`Bytes +0x${from.toString(16)} to +0x${(from + 4096).toString(16)} of`)
  })

  it('lists the referrers as index.inEdges does and the referents as objectEdges', async () => {
    const index = ctx.core.index
    const all = live()
    const hub = all.reduce((best, i) => (index.inDegree(i) > index.inDegree(best) ? i : best), all[0]!)
    const o = index.object(hub)
    const text = await pageText(ctx, objectHref(o.start))
    expect(rowTargets(text, 'referrers')).toEqual(index.inEdges(hub, PAGE_ROWS).map(e => ({address: e.from === hub ? 'itself' : hex(index.object(e.from).start), offsets: [off(e.offset), off(e.toOffset)]})))
    expect(section(text, 'referrers')).toContain(`Referrers (${index.inDegree(hub).toLocaleString('en-US')})`)
    // A page further on starts where the one before ended (inEdges' skip).
    expect(index.inEdges(hub, Infinity, -1, 7)).toEqual(index.inEdges(hub).slice(7))
    // The demo's lists are all shorter than a page (31 at most): a page of them is the whole list.
    const src = all.reduce((best, i) => (index.outDegree(i) > index.outDegree(best) ? i : best), all[0]!)
    const e = index.objectEdges(src)
    const out = await pageText(ctx, objectHref(index.object(src).start))
    expect(rowTargets(out, 'referents')).toEqual(Array.from(e.to, (to, i) => ({address: to === src ? 'itself' : hex(index.object(to).start), offsets: [off(e.offset[i]!), off(e.toOffset[i]!)]})))
    expect(section(out, 'referents')).toContain(`Points to (${index.outDegree(src)})`)
    const later = index.objectEdges(src, 7, 5)
    expect(Array.from(later.to)).toEqual(Array.from(e.to.subarray(7, 12)))
    // Past the last page: one line saying so, not an empty page.
    await expect(answer(ctx, objectPage, objectHref(index.object(src).start, {out: 2}))).rejects.toThrow(/^out=2: past the last page/)
  })

  it('shows the path from a root as pathsTo finds it, each step a link', async () => {
    const index = ctx.core.index
    const program = ctx.core.program()
    const deep = live().find(i => pathsTo(program, index, retention, index.object(i).start, {paths: 1})!.paths[0]?.steps.length! >= 4)!
    const o = index.object(deep)
    const want = pathsTo(program, index, retention, o.start, {paths: 1})!.paths[0]!
    const text = await pageText(ctx, objectHref(o.start))
    const steps = [...section(text, 'path').matchAll(/href="\/object\?addr=(0x[0-9a-f]+)"/g)].map(m => m[1])
    expect(steps).toEqual(want.steps.map(s => s.object.address))
    expect(section(text, 'path')).toContain(want.root.label)
  })

  it('shows a leaked object: no path, but the leaked objects nothing else points to that reach it', async () => {
    const index = ctx.core.index
    const leaked = live().filter(i => index.reachability(i) === 'leaked')
    expect(leaked.length).toBeGreaterThan(0)
    // One reached from another leaked object, so that the search back has a step to take.
    const slot = leaked.find(i => index.inDegree(i) > 0) ?? leaked[0]!
    const o = index.object(slot)
    const want = pathsTo(ctx.core.program(), index, retention, o.start, {paths: 1})!
    const text = await pageText(ctx, objectHref(o.start))
    expect(text).toContain('<span class="bad">leaked: no root reaches it</span>')
    const starts = [...section(text, 'path').matchAll(/href="\/object\?addr=(0x[0-9a-f]+)"/g)].map(m => m[1])
    expect(starts).toEqual(want.leakStarts.map(s => s.address))
    expect(starts.length).toBeGreaterThan(0)
  })

  it('lists the dominator children as childrenBySize ranks them, and the JSON pages them', async () => {
    const index = ctx.core.index
    const slot = retention.top(2)[1]!
    const text = await pageText(ctx, objectHref(index.object(slot).start))
    const slots = [...section(text, 'dominated').matchAll(/<li data-slot="(\d+)">/g)].map(m => Number(m[1]))
    const want = childrenBySize(retention, slot, PAGE_ROWS).top
    expect(want.length).toBeGreaterThan(1)
    expect(slots).toEqual(want.map(c => c.id))
    const json = (await answer(ctx, dominatedJsonPage, `/api/dominated?id=${slot}`)) as {kind: 'json'; value: DominatedPage}
    expect(json.value.rows.map(r => [r.slot, r.retainedBytes, r.retainedObjects, r.childCount])).toEqual(want.map(c => [c.id, c.bytes, c.objects, retention.childCount(c.id)]))
    expect(json.value.rows[0]!.href).toBe(objectHref(index.object(want[0]!.id).start))
  })

  it('pages the tree from its top: the ranked top first, then the others by size', async () => {
    const all = retention.childCount(null)
    const ranked = retention.topCount()
    expect(all).toBeGreaterThan(ranked + PAGE_ROWS)
    const pages: DominatedPage[] = []
    for (let p = 0; p * PAGE_ROWS < ranked + 2 * PAGE_ROWS; p++) pages.push(((await answer(ctx, dominatedJsonPage, `/api/dominated?page=${p + 1}`)) as {value: DominatedPage}).value)
    const slots = pages.flatMap(p => p.rows.map(r => r.slot))
    expect(new Set(slots).size).toBe(slots.length)
    expect(slots.slice(0, ranked)).toEqual(Array.from(retention.top(ranked)))
    // Past the ranked top, the same sizes childrenBySize ranks there (ties may come in another order).
    const bytes = pages.flatMap(p => p.rows.map(r => r.retainedBytes))
    expect(bytes).toEqual(childrenBySize(retention, null, slots.length).top.map(c => c.bytes))
    expect(pages.at(-1)!.next).toBe(`/api/dominated?page=${pages.length + 1}`)
    // An untyped block is named by what holds it, as find-object and the export name it.
    const rows = pages.flatMap(p => p.rows)
    const held = rows.filter(r => ctx.core.index.type(r.slot) === null && storedHolderName(ctx.core.index, r.slot) !== null)
    expect(held.length).toBeGreaterThan(0)
    for (const r of held) expect(r.name.endsWith(` held by ${storedHolderName(ctx.core.index, r.slot)}`), `${r.address}: ${r.name}`).toBe(true)
    // The page: the same first rows, each expandable where it has children.
    const top = (await answer(ctx, dominatorsPage, '/dominators')) as {kind: 'page'; body: {text: string}}
    expect([...top.body.text.matchAll(/<li data-slot="(\d+)">/g)].map(m => Number(m[1]))).toEqual(slots.slice(0, PAGE_ROWS))
    expect(top.body.text).toContain(`data-href="/api/dominated?id=${retention.top(2)[1]}"`)
  })

  it('a node with more children than it ranks lists them as the index keeps them, its top left out', () => {
    const ranked = retention.topCount()
    const rest = Array.from(retention.children(null)).filter(k => !new Set(retention.top(ranked)).has(k))
    const page = (p: number) => childrenPage(retention, null, p, PAGE_ROWS, 100).children.map(c => c.id)
    const pages = Array.from({length: Math.ceil(ranked / PAGE_ROWS) + 2}, (_, p) => page(p)).flat()
    expect(pages).toEqual([...retention.top(ranked), ...rest.slice(0, pages.length - ranked)])
    expect(childrenPage(retention, null, 20, PAGE_ROWS, 100).ranked).toBe(false)
  })

  it('says where an address outside the heap is, and refuses what is not an address', async () => {
    const index = ctx.core.index
    const global = index.rootTable()
    const at = Array.from(global.kind).findIndex((_, i) => index.rootsOf(global.to[i]!).some(r => r.kind === 'global'))
    const g = index.rootsOf(global.to[at]!).find(r => r.kind === 'global')!
    expect(await answer(ctx, objectPage, objectHref(g.address))).toMatchObject({kind: 'missing', message: expect.stringMatching(new RegExp(`^${hex(g.address)} is not in the TCMalloc heap: .+; scanned as a global root: `))})
    // A bad parameter is the server's 400 with its one line (server.ts answers BadParameter).
    await expect(answer(ctx, objectPage, '/object?addr=zz')).rejects.toThrow(new BadParameter('addr=zz: not an address (expected 0x… hex or decimal)'))
    await expect(answer(ctx, objectPage, '/object')).rejects.toThrow(new BadParameter('no addr= given'))
    await expect(answer(ctx, dominatedJsonPage, '/api/dominated?id=-1')).rejects.toThrow(/^id=-1: expected a whole number/)
    await expect(answer(ctx, dominatedJsonPage, '/api/dominated?page=99')).rejects.toThrow(/^page=99: past the last page/)
  })

  it('shows a free object without graph sections', async () => {
    const index = ctx.core.index
    const free = Array.from({length: index.objectCount}, (_, i) => i).find(i => index.state(i) !== 'live')!
    const text = await pageText(ctx, objectHref(index.object(free).start))
    expect(text).toContain(`<dt>state</dt><dd><span class="warn">${index.state(free)}</span>`)
    expect(section(text, 'referrers')).toBe('')
    expect(text).toContain('not live: not in the object graph')
  })
})

const sampled = fixtureIndex().find(f => f.id === 'v2.10-sampled')

describe.skipIf(!sampled)('the object page of a sampled object (v2.10-sampled)', () => {
  let ctx: ServeContext
  beforeAll(async () => {
    const f = fixtureFlags(sampled!)
    ctx = await servedCore(await fixtureCorePath(sampled!.id), ['--exe', f.exe, '--tcmalloc', f.tcmalloc!])
  })
  afterAll(() => closeServed(ctx))

  it('shows the allocation stack TCMalloc recorded', async () => {
    const index = ctx.core.index
    const sample = [...new SampleIndex(index)][0]!
    const o = index.object(sample.object)
    const want = allocationOfSpan(ctx.core.program(), index, o.span)!
    expect(want.stack.length).toBeGreaterThan(2)
    const text = await pageText(ctx, objectHref(o.start))
    const frames = [...section(text, 'allocation').matchAll(/<li><code>(0x[0-9a-f]+)<\/code> (.*?)<\/li>/g)].map(m => [m[1], m[2]])
    expect(frames).toEqual(want.stack.map(f => [f.address, f.symbol === null ? '<span class="dim">(no symbol)</span>' : f.symbol.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')]))
    expect(section(text, 'allocation')).toContain(`${want.requestedSize.toLocaleString('en-US')} B requested`)
  })
})

describe('the object page of an object named by DWARF (namesdemo -g)', () => {
  let ctx: ServeContext
  beforeAll(async () => {
    const tcmalloc = fileURLToPath(new URL('../../fixtures/demo/libtcmalloc.so.4', import.meta.url))
    ctx = await servedCore(await brotliCorePath(path.join(NAMES_DIR, 'core.br')), ['--exe', path.join(NAMES_DIR, 'namesdemo'), '--tcmalloc', tcmalloc])
  })
  afterAll(() => closeServed(ctx))

  it('names it with its tier, as find-object does', async () => {
    const index = ctx.core.index
    const slot = Array.from({length: index.objectCount}, (_, i) => i).find(i => index.state(i) === 'live' && index.via(i) === 'debug-info')!
    expect(slot).toBeDefined()
    const text = await pageText(ctx, objectHref(index.object(slot).start))
    const name = index.type(slot)!.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    expect(text).toContain(`<dt>type</dt><dd><a href="/class?id=${index.typeId(slot)}" class="class-link">${name}</a> <span class="dim">(debug-info)</span>`)
  })
})
