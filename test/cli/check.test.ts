import fs from 'node:fs'
import path from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parseSize} from '../../src/cli/parse-size.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex, FIXTURES, type Truth} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 13: `toma check` as a CI gate, on fixture v2.10-shared, whose process leaked a known set
// of objects on purpose (truth.json: `leaked`) and holds 4 000 app::Session of 480 bytes.
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
let work: string
let core: string
let truth: Truth
/** The bytes toma counts for the deliberate leaks: each leaked object's slot, as find-object sizes it. */
let leakedBytes: number

const check = (args: string[]) => runToma(['check', core, ...args], {cwd: work})

beforeAll(async () => {
  work = testTemp('toma-check-')
  core = path.join(work, 'core')
  fs.copyFileSync(await fixtureCorePath(entry.id), core)
  truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, entry.id, 'truth.json'), 'utf8'))
  const f = fixtureFlags(entry)
  const a = await runToma(['analyze', core, '--exe', f.exe, '--tcmalloc', f.tcmalloc!, '--json'], {cwd: work})
  expect(a.status, a.stderr).toBe(0)
  leakedBytes = 0
  for (const o of truth.objects.filter(o => o.leaked)) {
    const r = await runToma(['find-object', o.address, core, '--json'], {cwd: work})
    const info = JSON.parse(r.stdout)
    expect(info.object.address).toBe(o.address)
    expect(info.object.size).toBeGreaterThanOrEqual(o.size)
    leakedBytes += info.object.size
  }
})
afterAll(() => fs.rmSync(work, {recursive: true, force: true}))

describe('toma check', () => {
  it('exits 1 with one line when the deliberate leaks exceed --max-leaked-bytes, 0 at exactly their size', async () => {
    const over = await check(['--max-leaked-bytes', String(leakedBytes - 1)])
    expect(over.status, over.stderr).toBe(1)
    expect(over.stdout).toBe(`${core}: leaked-bytes ${leakedBytes} B (${leakedBytes}) over the limit ${leakedBytes - 1} B (${leakedBytes - 1})\n`)
    const at = await check(['--max-leaked-bytes', String(leakedBytes)])
    expect(at.status, at.stderr).toBe(0)
    expect(at.stdout).toBe(`${core}: the limit holds\n`)
  })

  it('per type: the accumulated sessions against --max-type, one line per broken limit, --json', async () => {
    const acc = truth.accumulation
    const sessions = acc.count * acc.bytesEach
    const r = await check(['--max-type', `${acc.type}=${sessions - 1}`, '--max-type', `${acc.type}=${sessions}`, '--max-leaked-bytes', '1KiB', '--max-warnings', '0', '--json'])
    expect(r.status, r.stderr).toBe(1)
    const out = JSON.parse(r.stdout)
    expect(out.passed).toBe(false)
    expect(out.checks).toEqual([
      {limit: 'leaked-bytes', max: 1024, measured: leakedBytes, ok: true},
      {limit: `type ${acc.type}`, max: sessions - 1, measured: sessions, ok: false},
      {limit: `type ${acc.type}`, max: sessions, measured: sessions, ok: true},
      {limit: 'warnings', max: 0, measured: 0, ok: true},
    ])
    const text = await check(['--max-type', `${acc.type}=${sessions - 1}`, '--max-type', `${acc.type}=${sessions}`, '--max-live-bytes', '1kB'])
    expect(text.status).toBe(1)
    expect(text.stdout.trim().split('\n')).toHaveLength(2)
    expect(text.stdout).toContain(`type ${acc.type} `)
    expect(text.stdout).toContain('live-bytes ')
  })

  it('a type no object has is refused (a misspelt gate would always pass), naming the closest types; no limit or a bad size is bad usage', async () => {
    const r = await check(['--max-type', 'app::Sesion=0', '--max-live-bytes', '1TB'])
    expect(r.status).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^toma: --max-type app::Sesion: no object in this core has that type; closest: app::Session, [^\n]*\(toma classes lists the types\)\n$/)
    const none = await check([])
    expect(none.status).toBe(2)
    expect(none.stderr.trim().split('\n')).toHaveLength(1)
    const bad = await check(['--max-live-bytes', '12XB'])
    expect(bad.status).toBe(2)
    expect(bad.stderr).toMatch(/^toma: 12XB: not a size \(.*\)\n$/)
  })
})

describe('sizes', () => {
  it('SI units are powers of 1000, IEC units powers of 1024', () => {
    expect(parseSize('123')).toBe(123)
    expect(parseSize('10MB')).toBe(10_000_000)
    expect(parseSize('1GiB')).toBe(2 ** 30)
    expect(parseSize('1.5 kib')).toBe(1536)
    expect(parseSize('2kB')).toBe(2000)
    expect(() => parseSize('1.5.3MB')).toThrow(/not a size/)
    expect(() => parseSize('-1')).toThrow(/not a size/)
  })
})
