import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {LIVE} from '../../src/heap/states.js'
import {RetentionIndex} from '../../src/index/retention-index.js'
import {classObjects, untypedObjectsOfSizeClass} from '../../src/queries/class-objects.js'
import {REPORT_LIMITS} from '../../src/queries/report-data.js'
import {topObjects} from '../../src/queries/top.js'
import {classHref, objectHref, searchHref} from '../../src/serve/links.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import {FIXTURES, addr, type Truth} from '../helpers/fixture-core.js'
import {serveFixture, type ServedFixture} from '../helpers/serve-fixture.js'

// toma serve's list pages on a fixture core, read over HTTP, against the process's own record
// (truth.json) and against full scans of the index.
const ID = 'v2.10-shared'
const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&')
const hrefs = (body: string, re: RegExp) => [...body.matchAll(re)].map(m => unescape(m[1]!))

describe(`toma serve's pages on ${ID}`, () => {
  let s: ServedFixture
  let truth: Truth
  beforeAll(async () => {
    s = await serveFixture(ID)
    truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, ID, 'truth.json'), 'utf8')) as Truth
  })
  afterAll(async () => {
    await s?.close()
  })
  const index = () => s.ctx.core.index
  const typeId = (name: string) => index().meta.typeNames.indexOf(name) + 1

  it('overview: every box of the treemap is a link, each object box to the object at the top of the dominator tree it draws', async () => {
    const a = await s.get('/')
    expect(a.status).toBe(200)
    const svg = a.body.slice(a.body.indexOf('<svg id="treemap"'), a.body.indexOf('</svg>', a.body.indexOf('<svg id="treemap"')))
    const boxes = svg.match(/<rect class="box/g) ?? []
    const linked = hrefs(svg, /<a href="([^"]+)"><rect class="box/g)
    expect(boxes.length).toBeGreaterThan(5)
    expect(linked).toHaveLength(boxes.length)
    const top = topObjects(index(), new RetentionIndex(index()), REPORT_LIMITS.topObjects)
    const objects = linked.filter(h => h.startsWith('/object?'))
    expect(objects).toHaveLength(new Set(objects).size)
    expect(new Set(objects)).toEqual(new Set(top.objects.filter(o => o.retainedBytes > 0).map(o => objectHref(Number(o.address)))))
    // Each type's box opens its class.
    const groups = hrefs(svg, /<a href="([^"]+)"><rect class="group/g)
    expect(groups).toContain(classHref(typeId('app::Registry')))
  })

  it('classes: sorted by the server, filtered, each name a link to its class', async () => {
    const rows = async (q: string) => {
      const body = (await s.get(`/classes${q}`)).body
      const table = body.slice(body.indexOf('<table id="classes"'), body.indexOf('</table>', body.indexOf('<table id="classes"')))
      return [...table.matchAll(/<tr><td class="n" data-v="(\d+)">.*?<a href="([^"]+)">([^<]*)<\/a>/g)].map(m => ({objects: Number(m[1]), href: unescape(m[2]!), name: unescape(m[3]!)}))
    }
    const byObjects = await rows('?sort=objects')
    expect(byObjects.length).toBeGreaterThan(5)
    expect(byObjects.map(r => r.objects)).toEqual([...byObjects.map(r => r.objects)].sort((x, y) => y - x))
    for (const r of byObjects) expect(r.href).toBe(classHref(typeId(r.name)))
    const session = byObjects.find(r => r.name === 'app::Session')!
    expect(session.objects).toBeGreaterThanOrEqual(truth.accumulation.count)
    const byName = await rows('?sort=name')
    expect(byName.map(r => r.name)).toEqual([...byName.map(r => r.name)].sort())
    const filtered = await rows('?filter=APP::NODE')
    expect(filtered.map(r => r.name)).toEqual(['app::Node'])
    expect((await s.get('/classes?sort=size')).status).toBe(400)
  })

  it("class: following its next links lists exactly the class's live objects, each a link to its object", async () => {
    const id = typeId('app::Session')
    const listed: string[] = []
    let next: string | undefined = classHref(id)
    let pages = 0
    while (next) {
      const body: string = (await s.get(next)).body
      listed.push(...hrefs(body, /<a href="(\/object\?addr=[^"]+)">/g))
      next = hrefs(body, /<a href="([^"]+)" rel="next">/g)[0]
      pages++
    }
    const counts = index().nameCounts()
    expect(listed).toHaveLength(counts['type.liveObjects'][id]!)
    expect(pages).toBe(Math.ceil(listed.length / 100))
    const addresses = listed.map(h => Number(new URL(h, 'http://x').searchParams.get('addr')))
    // Every one was allocated live by the process, and its named sessions are among them.
    const live = new Set(truth.live.map(([a]) => addr(a)))
    expect(addresses.every(a => live.has(a))).toBe(true)
    for (const o of truth.objects.filter(x => x.class === 'app::Session')) expect(addresses).toContain(addr(o.address))
    expect([...addresses].sort((x, y) => x - y)).toEqual(addresses)
  })

  // Only two pages work before the URL is printed: the diff of two cores (matching every object of
  // both, far past a request's time), and the object page, which finds the threads and unwinds
  // their stacks (a stack root's thread and frame; libc's symbols read once), shared then by the
  // threads page. Nothing that passes over every slot.
  it('no page but the diff of two cores and the object page does work when the server starts', () => {
    expect(SERVE_PAGES.filter(p => p.prepare).map(p => p.path).sort()).toEqual(['/diff', '/object'])
  })

  it('the navigation lights the section a page belongs to: a class under Classes', async () => {
    const current = (body: string) => hrefs(body, /<a href="([^"]+)" class="current" aria-current="page">/g)
    expect(current((await s.get(classHref(typeId('app::Session')))).body)).toEqual(['/classes'])
    expect(current((await s.get('/classes')).body)).toEqual(['/classes'])
    expect(current((await s.get('/leaks')).body)).toEqual(['/leaks'])
  })

  it('class objects by cursor: pages of any size join to a full scan, for every name and size class', () => {
    const types = index().columns.type()
    const states = index().objects.state
    const sizeClassOf = (slot: number) => index().sizeClass(index().object(slot))
    const all = (keep: (slot: number) => boolean) => Array.from(types.keys()).filter(i => states[i] === LIVE && keep(i))
    const paged = (page: (from: number) => {slots: number[]; next: number | null}) => {
      const out: number[] = []
      for (let from: number | null = 0; from !== null; ) {
        const p = page(from)
        out.push(...p.slots)
        from = p.next
      }
      return out
    }
    const counts = index().nameCounts()
    for (let t = 1; t <= index().meta.typeNames.length; t++) {
      expect(paged(from => classObjects(index(), t, from, 7)), `type ${t}`).toEqual(all(i => types[i] === t))
    }
    expect(paged(from => classObjects(index(), 0, from, 1000))).toHaveLength(all(i => types[i] === 0).length)
    for (let c = 0; c < 256; c++) {
      if (!(counts['sizeClass.untypedObjects'][c]! > 0)) continue
      const got = paged(from => untypedObjectsOfSizeClass(index(), c, from, 5))
      expect(got, `size class ${c}`).toHaveLength(counts['sizeClass.untypedObjects'][c]!)
      expect(got.every(i => types[i] === 0 && states[i] === LIVE && sizeClassOf(i) === c)).toBe(true)
    }
  })

  it("a later page of a class is the same slice of a full scan, and its scan stops at the class's last object", () => {
    const types = index().columns.type()
    const states = index().objects.state
    const slotsOf = (t: number) => Array.from(types.keys()).filter(i => states[i] === LIVE && types[i] === t)
    // The classes of more than two pages of 3 whose last object lies furthest from the last slot.
    const classes = Array.from({length: index().meta.typeNames.length}, (_, k) => k + 1)
      .map(t => ({t, slots: slotsOf(t)}))
      .filter(c => c.slots.length > 6)
      .sort((a, b) => a.slots.at(-1)! - b.slots.at(-1)!)
      .slice(0, 5)
    expect(classes.length).toBeGreaterThan(0)
    expect(classes[0]!.slots.at(-1)!).toBeLessThan(index().objectCount - 1000)
    for (const {t, slots} of classes) {
      const first = classObjects(index(), t, 0, 3)
      const second = classObjects(index(), t, first.next!, 3)
      expect(second.slots, `type ${t}`).toEqual(slots.slice(3, 6))
      // Its last page: the rest of the class, and nothing read past its last object.
      const lastFrom = slots[slots.length - 1 - ((slots.length - 1) % 3)]!
      const last = classObjects(index(), t, lastFrom, 3)
      expect(last.slots, `type ${t}`).toEqual(slots.slice(slots.indexOf(lastFrom)))
      expect(last.next).toBeNull()
      expect(last.readTo, `type ${t}`).toBeLessThanOrEqual(slots.at(-1)! + 1)
      expect(second.readTo, `type ${t}`).toBeLessThanOrEqual(slots.at(-1)! + 1)
    }
  })

  it('search: an address goes to its object, another says where it lies; a name lists classes; a symbol gives its address', async () => {
    const customer = truth.objects.find(o => o.name === 'customer1')!
    const inside = await s.get(searchHref(`0x${(addr(customer.address) + 8).toString(16)}`))
    expect(inside.status).toBe(303)
    expect(inside.headers.location).toBe(objectHref(addr(customer.address)))
    const decimal = await s.get(searchHref(String(addr(customer.address))))
    expect(decimal.headers.location).toBe(objectHref(addr(customer.address)))
    const worker = truth.threads.find(t => t.stackStart)!
    const onStack = await s.get(searchHref(`0x${(addr(worker.stackEnd!) - 64).toString(16)}`))
    expect(onStack.status).toBe(200)
    expect(onStack.body).toContain(`stack of thread ${worker.tid}`)
    // Parsed as the commands parse an address: one past user space is refused with the reason, not wrapped into a place.
    const beyond = await s.get(searchHref('0xffffffffffffffff'))
    expect(beyond.status).toBe(200)
    expect(beyond.body).toContain('0xffffffffffffffff: beyond user space')
    const byName = await s.get(searchHref('box'))
    expect(byName.body).toContain(`<a href="${classHref(typeId('app::Box<int>'))}">app::Box&lt;int&gt;</a>`)
    const symbol = await s.get(searchHref(truth.accumulation.symbol))
    expect(symbol.body).toContain(`Symbol <code>${truth.accumulation.symbol}</code> is at`)
    // g_registry's word points to the registry object.
    expect(symbol.body).toContain(objectHref(addr(truth.accumulation.holder)))
  })

  it('leaks: the leaked structures start at objects the process leaked, each a link', async () => {
    const body = (await s.get('/leaks')).body
    const starts = hrefs(body, /<a href="(\/object\?addr=[^"]+)">/g).map(h => Number(new URL(h, 'http://x').searchParams.get('addr')))
    expect(starts.length).toBeGreaterThan(0)
    const leaked = new Set(truth.objects.filter(o => o.leaked).map(o => addr(o.address)))
    for (const a of starts) expect(leaked.has(a), a.toString(16)).toBe(true)
  })

  it('the report pages answer; diff without a baseline says how to get one; bad parameters are refused', async () => {
    for (const p of ['/suspects', '/threads', '/memory', '/damage']) expect((await s.get(p)).status, p).toBe(200)
    const threads = (await s.get('/threads')).body
    for (const t of truth.threads) expect(threads).toContain(`data-v="${t.tid}"`)
    expect((await s.get('/diff')).body).toContain('No baseline core')
    expect((await s.get('/class')).status).toBe(404)
    expect((await s.get(`/class?id=${index().meta.typeNames.length + 1}`)).status).toBe(400)
    expect((await s.get('/class?id=-1')).status).toBe(404)
  })
})
