import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {INDEX_DATA_START, indexLayout} from '../helpers/index-layout.js'

// Issue 8 reproductions 4, 5 and 6 and issue 7 §4 (the default core), on one real fixture core.
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
let root: string
let truth: Truth
let source: string

beforeAll(async () => {
  root = testTemp('toma-inputs-')
  source = await fixtureCorePath(entry.id)
  truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.id, 'truth.json'), 'utf8'))
})

afterAll(() => fs.rmSync(root, {recursive: true, force: true}))

/** A fresh folder with a copy of the core in it. */
function workFolder(name: string): {dir: string; core: string} {
  const dir = path.join(root, name)
  fs.mkdirSync(dir)
  const core = path.join(dir, 'core')
  fs.copyFileSync(source, core)
  return {dir, core}
}

const classNames = () => [...new Set(truth.objects.map(o => o.class).filter((c): c is string => c !== null))]

// Two tests analyse v2.10-shared without --tcmalloc: toma finds the library where the core mapped
// it, which is Debian's libgoogle-perftools4 (2.10) on the host; without it they are skipped,
// saying so, as a fresh machine's `npm test` would otherwise fail them (.ci/run installs it).
const HOST_LIBTCMALLOC = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4.5.10'
const noHostLibtcmalloc = !fs.existsSync(HOST_LIBTCMALLOC)
if (noHostLibtcmalloc) console.warn(`index-inputs.test: two tests skipped: no ${HOST_LIBTCMALLOC} (apt-get install -y libgoogle-perftools4)`)

describe('an index that knows its inputs', () => {
  // The core records its executable at a path of the machine that made the fixtures (fixtures/build,
  // never committed): without --exe it is not found, as for a core brought from another machine.
  it.skipIf(noHostLibtcmalloc)('analyze without --exe warns what is missing; classes then given --exe analyses again with a one-line reason and shows the types', async () => {
    const {dir, core} = workFolder('exe')
    const exe = fixtureFlags(entry).exe
    const a = await runToma(['analyze', core, '--json'], {cwd: dir})
    expect(a.status, a.stderr).toBe(0)
    const warning = JSON.parse(a.stdout).warnings.list.find((w: {phase: string}) => w.phase === 'modules')
    expect(warning.message).toMatch(/^executable heapdemo not found .*class names of its objects unknown.*pass --exe or --sysroot$/)

    // The untyped index answers a query without --exe, and the query says what is missing.
    const untyped = await runToma(['classes', core, '--json'], {cwd: dir})
    expect(untyped.status, untyped.stderr).toBe(0)
    expect(untyped.stderr).toMatch(/^toma: warning: executable heapdemo not found .*pass --exe or --sysroot$/m)
    expect(untyped.stderr).not.toMatch(/analysing/)
    const u = JSON.parse(untyped.stdout)
    expect(u.warnings.map((w: {message: string}) => w.message)).toContain(warning.message)
    for (const name of classNames()) expect(u.types.map((t: {type: string}) => t.type)).not.toContain(name)
    const find = JSON.parse((await runToma(['find-object', truth.objects[0]!.address, core, '--json'], {cwd: dir})).stdout)
    expect(find.warnings.map((w: {message: string}) => w.message)).toContain(warning.message)

    const typed = await runToma(['classes', core, '--exe', exe, '--json'], {cwd: dir})
    expect(typed.status, typed.stderr).toBe(0)
    expect(typed.stderr.trim().split('\n')).toEqual([`toma: index made without --exe; analysing again with --exe ${exe}`])
    const t = JSON.parse(typed.stdout)
    for (const name of classNames()) expect(t.types.map((x: {type: string}) => x.type)).toContain(name)
    expect(t.warnings).toEqual([])
    // The new index records --exe: the same query answers from it, and so does one without the flag.
    for (const args of [['classes', core, '--exe', exe], ['classes', core]]) {
      const again = await runToma(args, {cwd: dir})
      expect(again.status, again.stderr).toBe(0)
      expect(again.stderr).toBe('')
    }
  })

  it.skipIf(noHostLibtcmalloc)('--exe naming the file the index found by itself reuses the index; another copy of it analyses again', async () => {
    const {dir, core} = workFolder('exe-found')
    for (const sub of ['bin', 'other']) {
      fs.mkdirSync(path.join(dir, sub))
      fs.copyFileSync(fixtureFlags(entry).exe, path.join(dir, sub, 'heapdemo'))
    }
    const a = await runToma(['analyze', core, '--solib-search-path', path.join(dir, 'bin'), '--json'], {cwd: dir})
    expect(a.status, a.stderr).toBe(0)
    const same = await runToma(['leaks', core, '--exe', 'bin/heapdemo'], {cwd: dir})
    expect(same.status, same.stderr).toBe(0)
    expect(same.stderr).toBe('')
    const other = await runToma(['leaks', core, '--exe', 'other/heapdemo'], {cwd: dir})
    expect(other.status, other.stderr).toBe(0)
    expect(other.stderr.trim().split('\n')).toEqual([`toma: index made without --exe; analysing again with --exe ${path.join(dir, 'other', 'heapdemo')}`])
  })

  it('a damaged index (an array length of 10^12, a cut file, garbage JSON) is rebuilt for its core and is one clear line when given directly', async () => {
    const {dir, core} = workFolder('damaged')
    const index = core + '.toma-index'
    const a = await runToma(['analyze', core], {cwd: dir})
    expect(a.status, a.stderr).toBe(0)
    const good = fs.readFileSync(index)
    const {header, headerAt, headerLength} = indexLayout(good)
    expect(headerAt + headerLength).toBe(good.length)
    header.arrays['object.state'].length = 1e12
    const json = Buffer.from(JSON.stringify(header))
    const pre = Buffer.from(good.subarray(0, 24))
    pre.writeUInt32LE(json.length, 12)
    const damages: Array<[string, Buffer, RegExp]> = [
      ['huge array length', Buffer.concat([pre, good.subarray(24, headerAt), json]), /array object\.state runs past the end of the file/],
      ['cut file', good.subarray(0, Math.floor(good.length / 2)), /the file is shorter than its header/],
      ['garbage JSON', Buffer.concat([good.subarray(0, headerAt), Buffer.alloc(headerLength, 0x7b)]), /header is not JSON/],
    ]
    for (const [what, bytes, problem] of damages) {
      fs.writeFileSync(index, bytes)
      const direct = await runToma(['classes', index], {cwd: dir})
      expect(direct.status, what).toBe(2)
      expect(direct.stderr.trim().split('\n'), what).toHaveLength(1)
      expect(direct.stderr, what).toMatch(problem)
      expect(direct.stderr, what).not.toMatch(/internal error|at .*\.js/)

      const rebuilt = await runToma(['classes', core, '--json'], {cwd: dir})
      expect(rebuilt.status, `${what}: ${rebuilt.stderr}`).toBe(0)
      expect(rebuilt.stderr, what).toMatch(/^toma: index .* is damaged \(.*\); analysing again$/m)
      expect(rebuilt.stderr, what).toMatch(problem)
      expect(JSON.parse(rebuilt.stdout).untyped.length, what).toBeGreaterThan(0)
    }
    // A value inside an array (a type id past the type table), which no header check sees, is
    // still one clear line when a query meets it.
    // Type ids are 16 bits where they fit (object-types.ts), 32 past 65,535 classes.
    const types = header.arrays['object.type']
    expect(types.type).toBe('u16')
    const wrong = Buffer.from(good)
    const dataStart = INDEX_DATA_START
    for (let i = 0; i < types.length; i++) wrong.writeUInt16LE(0xffff, dataStart + types.offset + i * 2)
    fs.writeFileSync(index, wrong)
    const r = await runToma(['find-object', truth.objects[0]!.address, index], {cwd: dir})
    expect(r.status).toBe(2)
    // (after the warning every query repeats: this core was analysed without its executable)
    expect(r.stderr.trim().split('\n').filter(l => !l.startsWith('toma: warning:'))).toEqual([
      `toma: ${index}: damaged toma index (type id 65535 is out of range); run toma analyze on its core again`,
    ])
    // classes reads the counts analyze kept (issue 52): a damaged one is one clear line too.
    const counted = header.arrays['type.liveObjects']
    const negative = Buffer.from(good)
    negative.writeDoubleLE(-3, dataStart + counted.offset + 8 * (counted.length - 1))
    fs.writeFileSync(index, negative)
    const c = await runToma(['classes', index], {cwd: dir})
    expect(c.status).toBe(2)
    expect(c.stderr.trim().split('\n').filter(l => !l.startsWith('toma: warning:'))).toEqual([`toma: ${index}: damaged toma index (type.liveObjects holds -3); run toma analyze on its core again`])

    // A damaged span entry: a query that looks up one object reads only the spans it touches
    // (issue 13: start-up), and still checks the span it uses against its neighbours; a command
    // that walks every object checks the whole table. Both say the same one line.
    const start = header.arrays['span.start']
    const firstObject = header.arrays['span.firstObject']
    const address = Number(truth.objects[0]!.address)
    let span = -1
    for (let s = 0; s < start.length && good.readDoubleLE(dataStart + start.offset + s * 8) <= address; s++) span = s
    expect(span).toBeGreaterThan(0)
    const slots = Buffer.from(good)
    const at = dataStart + firstObject.offset + span * 8
    slots.writeDoubleLE(slots.readDoubleLE(at) + 1, at)
    fs.writeFileSync(index, slots)
    // (classes counts from what analyze kept, issue 52; the export walks every object)
    for (const args of [['find-object', truth.objects[0]!.address, index], ['export', index, '-o', path.join(dir, 'export.json')]]) {
      const q = await runToma(args, {cwd: dir})
      expect(q.status, args[0]).toBe(2)
      expect(q.stderr.trim().split('\n').filter(l => !l.startsWith('toma: warning:')), args[0]).toEqual([
        `toma: ${index}: damaged toma index (span ${span} has bad object slots); run toma analyze on its core again`,
      ])
    }
  })
})

describe('the default core (issue 7 §4)', () => {
  it('only analyze sets it: a query given another core explicitly does not', async () => {
    const {dir, core} = workFolder('default')
    const other = path.join(dir, 'other-core')
    fs.copyFileSync(source, other)
    expect((await runToma(['analyze', core], {cwd: dir})).status).toBe(0)
    const q = await runToma(['find-object', truth.objects[0]!.address, other], {cwd: dir})
    expect(q.status, q.stderr).toBe(0)
    const r = await runToma(['classes'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toContain(`using the analysis of ${core} `)
    expect(JSON.parse(fs.readFileSync(path.join(dir, '.toma', 'last.json'), 'utf8')).core).toBe(core)
  })

  it('--index PATH does not create ./.toma/, in analyze or in a query', async () => {
    const {dir, core} = workFolder('index-flag')
    const index = path.join(root, 'elsewhere.toma-index')
    const a = await runToma(['analyze', core, '--index', index], {cwd: dir})
    expect(a.status, a.stderr).toBe(0)
    expect(fs.existsSync(index)).toBe(true)
    const q = await runToma(['classes', core, '--index', index], {cwd: dir})
    expect(q.status, q.stderr).toBe(0)
    expect(q.stderr).not.toMatch(/analys/) // answered from the index given
    // --index alone names the analysis: its core comes from the index, not from ./.toma/.
    const alone = await runToma(['classes', '--index', index, '--json'], {cwd: dir})
    expect(alone.status, alone.stderr).toBe(0)
    expect(alone.stderr).not.toMatch(/analys/)
    expect(JSON.parse(alone.stdout)).toEqual(JSON.parse((await runToma(['classes', core, '--index', index, '--json'], {cwd: dir})).stdout))
    expect(fs.existsSync(path.join(dir, '.toma'))).toBe(false)
  })
})
