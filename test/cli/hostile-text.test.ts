import {spawn, spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {demangle} from '../../src/elf/demangle.js'
import {findChromium} from '../helpers/chromium.js'
import {FIXTURES, fixtureIndex, type Truth} from '../helpers/fixture-core.js'
import {HOSTILE_LIBRARY_PATH, hostileFixture, LONG_TYPE_DEPTH, nestedTemplateVtable, type HostileFixture} from '../helpers/hostile-fixture.js'
import {openReport} from '../helpers/report-page.js'
import {request} from '../helpers/serve-fixture.js'
import {Core} from '../../src/core/core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {Program} from '../../src/program/program.js'
import {SERVE_PAGES} from '../../src/serve/pages/routes.js'
import {startServer} from '../../src/serve/server.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 29, items 9, 10 and 12: a core whose file name, library paths, process name and
// arguments, symbol names and heap strings hold terminal escapes, forged lines and a type name
// too long for Graphviz (test/helpers/hostile-fixture.ts patches a real fixture's bytes). Every
// text output must show them escaped: no control byte reaches stdout or stderr but our own LF and
// TAB (and, with colour on, chalk's SGR codes); no line can be forged; the DOT export parses.

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))
const ID = 'v2.10-sampled'
const entry = fixtureIndex().find(f => f.id === ID)
const DOT = ['/usr/bin/dot', '/usr/local/bin/dot'].find(f => fs.existsSync(f))
const chromium = findChromium()
if (!entry) console.warn(`hostile-text.test: skipped: no fixture ${ID}`)
if (!DOT) console.warn('hostile-text.test: the Graphviz check is skipped: no dot (apt-get install -y graphviz)')

/** C0 but LF and TAB, DEL, C1, the line separators, bidi embeddings, overrides and isolates. */
const FOREIGN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

/** Each control character in the output, by code point and place; the bytes must be UTF-8 (a raw C1 byte is not). */
function foreignControls(out: Buffer, colour = false): string[] {
  const text = new TextDecoder('utf-8', {fatal: true}).decode(out)
  const rest = colour ? text.replace(/\u001b\[[0-9;]*m/g, '') : text
  return [...rest.matchAll(FOREIGN)].map(m => `U+${m[0].codePointAt(0)!.toString(16).padStart(4, '0')} at ${m.index}: ${JSON.stringify(rest.slice(Math.max(0, m.index! - 20), m.index! + 20))}`)
}

interface Run {
  status: number | null
  stdout: Buffer
  stderr: Buffer
}

function toma(args: string[], cwd: string, env: Record<string, string> = {NO_COLOR: '1'}): Promise<Run> {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [BIN, ...args], {cwd, env: {...process.env, ...env}})
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', d => out.push(d))
    child.stderr.on('data', d => err.push(d))
    child.on('close', status => resolve({status, stdout: Buffer.concat(out), stderr: Buffer.concat(err)}))
  })
}

describe.skipIf(!entry)('text from a hostile core is shown escaped', () => {
  let work: string
  let f: HostileFixture
  let flags: string[]
  let analyzed: Run
  let nodeA: string

  beforeAll(async () => {
    work = testTemp('toma-hostile-')
    f = await hostileFixture(work)
    flags = ['--exe', f.exe, '--tcmalloc', f.tcmalloc, '--index', path.join(work, 'core.toma-index')]
    analyzed = await toma(['analyze', f.core, ...flags], work)
    const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, ID, 'truth.json'), 'utf8')) as Truth
    nodeA = truth.objects.find(o => o.name === 'nodeA')!.address
  }, 180_000)
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  const clean = (r: Run, colour = false) => {
    expect(foreignControls(r.stdout, colour), 'stdout').toEqual([])
    expect(foreignControls(r.stderr, colour), 'stderr').toEqual([])
  }
  const noForgedLine = (text: string) => expect(text).not.toMatch(/^(Warnings|Warn) \(0\)/m)
  const libraryNote = 'library x\\x1b]0;T\\x07\\x1b[2J\\x0d\\x0aWarnings (0)\\x9b\\x7f\\u202eaaaaaaaaaaaaa not found'

  it('analyze: the core\'s name, the process\'s', () => {
    expect(analyzed.status, analyzed.stderr.toString()).toBe(0)
    clean(analyzed)
    const out = analyzed.stdout.toString()
    expect(out.split('\n')[0]).toBe(`core ${work}/core\\x0ax [URL="javascript:alert(1)"];\\x0a\\x1b]0;title\\x07  (\\x1b]0;T\\x07\\x1b[2J\\x9b\\x7f pid 10751)`)
    noForgedLine(out)
  })

  it('info (and --json): the process name and arguments, the library\'s path in modules and mappings', async () => {
    const r = await toma(['info', f.core, '--exe', f.exe, '--tcmalloc', f.tcmalloc], work)
    expect(r.status, r.stderr.toString()).toBe(0)
    clean(r)
    const out = r.stdout.toString()
    const json = await toma(['info', f.core, '--exe', f.exe, '--tcmalloc', f.tcmalloc, '--json'], work)
    // JSON escapes C0 itself; DEL, C1 and U+202E it leaves raw: the last guard writes them as \u escapes, the value stays.
    clean(json)
    const mapped = (JSON.parse(json.stdout.toString()) as {mappings: Array<{file: string | null}>}).mappings.filter(m => m.file === HOSTILE_LIBRARY_PATH)
    expect(out).toContain('process \\x1b]0;T\\x07\\x1b[2J\\x9b\\x7f pid 10751  ./heapdemo \\x0d\\x1b[2K\\x0aWarnings (0)\\x0a\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07')
    expect(out.split('\n').filter(l => l.endsWith('  /x\\x1b]0;T\\x07\\x1b[2J\\x0d\\x0aWarnings (0)\\x9b\\x7f\\u202eaaaaaaaaaaaaa'))).toHaveLength(mapped.length)
    expect(mapped.length).toBeGreaterThan(0)
    expect(out).toContain('\n0x7f5316e00000  x\\x1b]0;T\\x07\\x1b[2J\\x0d\\x0aWarnings (0)\\x9b\\x7f\\u202eaaaaaaaaaaaaa  ')
    noForgedLine(out)
  })

  it('threads: a start routine\'s symbol name; the missing library\'s note on stderr', async () => {
    const r = await toma(['threads', f.core, ...flags], work)
    expect(r.status, r.stderr.toString()).toBe(0)
    clean(r)
    expect(r.stdout.toString()).toContain('\\x1b]0;T\\x07\\x0d\\x0aWarn(0)')
    expect(r.stderr.toString()).toContain(`toma: warning: ${libraryNote}`)
    expect(r.stderr.toString().trim().split('\n')).toHaveLength(1)
    noForgedLine(r.stdout.toString())
  })

  it('threads with colour: chalk\'s SGR codes pass, nothing else', async () => {
    const r = await toma(['threads', f.core, ...flags], work, {NO_COLOR: '', FORCE_COLOR: '1'})
    expect(r.status).toBe(0)
    expect(r.stdout.toString()).toMatch(/\u001b\[1m/)
    clean(r, true)
  })

  it('find-object --strings: a std::string in the heap, quoted (JSON escapes, then \\x for what JSON leaves raw)', async () => {
    const r = await toma(['find-object', `0x${f.stringAddress.toString(16)}`, f.core, ...flags, '--strings'], work)
    expect(r.status, r.stderr.toString()).toBe(0)
    clean(r)
    expect(r.stdout.toString()).toContain('length 65: "1600 \\u001b]0;T\\u0007\\u001b[K\\r\\nW(0)\\x9b\\x7f\u00e2\\x80\u00ae, Mountain View, CA 94043, United States"')
  })

  it('profile --format legacy: a path cannot forge MAPPED_LIBRARIES lines (newline as the kernel writes it, \\012)', async () => {
    const r = await toma(['profile', f.core, ...flags, '--format', 'legacy'], work)
    expect(r.status, r.stderr.toString()).toBe(0)
    clean(r)
    const text = r.stdout.toString()
    const maps = text.slice(text.indexOf('\nMAPPED_LIBRARIES:\n') + 19).trimEnd().split('\n')
    // ProcMapsIterator::FormatLine's layout, every line (a forged one would not be).
    for (const line of maps) expect(line).toMatch(/^[0-9a-f]{8,}-[0-9a-f]{8,} [-r][-w][-x][-p] [0-9a-f]{8,} 00:00 0 {11}(\S.*)?$/)
    expect(maps.filter(l => l.endsWith(' /x\\x1b]0;T\\x07\\x1b[2J\\x0d\\012Warnings (0)\\x9b\\x7f\\u202eaaaaaaaaaaaaa'))).toHaveLength(5)
  })

  it('export --format json to standard output: DEL, C1 and U+202E (raw in JSON) pass the last guard, the JSON stays valid and equal', async () => {
    const r = await toma(['export', f.core, ...flags, '--format', 'json'], work)
    expect(r.status, r.stderr.toString()).toBe(0)
    clean(r)
    const file = path.join(work, 'graph.json')
    expect((await toma(['export', f.core, ...flags, '--format', 'json', '-o', file], work)).status).toBe(0)
    const raw = fs.readFileSync(file, 'utf8')
    // The file (no terminal) holds them raw, as JSON.stringify writes them.
    expect(raw).toContain('Warnings (0)\u009b\u007f\u202e')
    expect(JSON.parse(r.stdout.toString())).toEqual(JSON.parse(raw))
  })

  describe('export --format dot', () => {
    // The type name the patched vtable symbol demangles to, measured by the demangler itself.
    const longType = demangle(nestedTemplateVtable(LONG_TYPE_DEPTH)).replace(/^vtable for /, '')

    it('the long type name is longer than Graphviz takes', () => {
      expect(longType.length).toBe(26_618)
    })

    for (const dominators of [false, true]) {
      it(`${dominators ? '--dominators: ' : ''}a newline in the core's name stays in the comment, the ${longType.length}-character type is cut, dot parses it`, async () => {
        const r = await toma(['export', f.core, ...flags, '--format', 'dot', '--around', nodeA, ...(dominators ? ['--dominators'] : [])], work)
        expect(r.status, r.stderr.toString()).toBe(0)
        clean(r)
        const dot = r.stdout.toString()
        // Every line is the graph's, a comment, or a statement of toma's: the name injected no node.
        for (const line of dot.trimEnd().split('\n')) expect(line).toMatch(/^(digraph \w+ \{|\}|  \/\/ toma: .*|  (node|edge) \[.*\];|  rankdir=TB;|  labelloc=b;|  label=".*";|  [or]\d+ \[.*\];|  [or]\d+ -> (o|more)\d+( \[.*\])?;|  more\d+ \[.*\];)$/)
        expect(dot).toContain('core\\\\x0ax [URL=\\"javascript:alert(1)\\"];\\\\x0a\\\\x1b]0;title\\\\x07')
        if (!dominators) expect(dot).toContain(`  // toma: the objects around ${nodeA} in ${work}/core\\x0ax [URL="javascript:alert(1)"];\\x0a\\x1b]0;title\\x07\n`)
        const quoted = [...dot.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(m => m[1]!)
        expect(Math.max(...quoted.map(q => Buffer.byteLength(q)))).toBeLessThanOrEqual(16_000)
        expect(quoted.some(q => q.startsWith(longType.slice(0, 1000)) || q.includes(`\\n${longType.slice(0, 1000)}`))).toBe(true)
        expect(dot).toMatch(/ … \[cut: \d{2},\d{3} characters\]/)
        if (DOT) {
          const svg = spawnSync(DOT, ['-Tsvg'], {input: dot, maxBuffer: 64 << 20})
          expect(svg.status, svg.stderr.toString()).toBe(0)
          expect(svg.stdout.toString()).not.toMatch(/<a |href=/)
        }
      })
    }
  })

  describe('toma serve', () => {
    it('its pages hold no control character but LF and TAB, and no markup from the core', async () => {
      const index = HeapIndex.open(path.join(work, 'core.toma-index'))!
      const program = Program.load(Core.open(f.core), {exe: f.exe, tcmalloc: f.tcmalloc})
      index.useCore(program.core.memory, f.core)
      const server = await startServer({core: {index, corePath: f.core, indexPath: index.path, program: () => program}, toolVersion: 'test'}, SERVE_PAGES, {host: '127.0.0.1', port: 0})
      try {
        const url = new URL(server.url)
        const cookie = String((await request(server.port, {path: url.pathname + url.search})).headers['set-cookie']?.[0]).split(';')[0]!
        const pages = ['/', '/classes', '/leaks', '/suspects', '/threads', '/memory', '/damage', `/search?q=0x${f.stringAddress.toString(16)}`, '/search?q=heapdemo_worker1']
        for (const p of pages) {
          const a = await request(server.port, {path: p, headers: {cookie}})
          expect(a.status, p).toBeLessThan(400)
          expect(foreignControls(Buffer.from(a.body)), p).toEqual([])
          expect(a.body, p).not.toMatch(/<[^>]*javascript:|URL="javascript/)
        }
        const overview = (await request(server.port, {path: '/', headers: {cookie}})).body
        // The core's name and the process's, as text.
        expect(overview).toContain('x [URL=&quot;javascript:alert(1)&quot;];')
        expect(overview).toContain('\\x1b]0;T\\x07\\x1b[2J\\x9b\\x7f')
      } finally {
        await server.close()
        index.close()
        program.core.close()
      }
    })
  })

  describe('the HTML report', () => {
    let html: string
    beforeAll(async () => {
      const r = await toma(['report', f.core, ...flags, '-o', path.join(work, 'report.html')], work)
      expect(r.status, r.stderr.toString()).toBe(0)
      clean(r)
      html = fs.readFileSync(path.join(work, 'report.html'), 'utf8')
    }, 120_000)

    it('holds no control character but LF and TAB', () => {
      expect(foreignControls(Buffer.from(html))).toEqual([])
      expect(html).toContain('\\x1b]0;T\\x07\\x1b[2J\\x9b\\x7f')
    })

    it('allows its one script by hash, not \'unsafe-inline\'', () => {
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)![1]!
      const scriptSrc = csp.split(';').map(s => s.trim()).find(s => s.startsWith('script-src '))!
      expect(scriptSrc).not.toContain('unsafe-inline')
      const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(m => m[1]!)
      expect(scripts).toHaveLength(1)
      expect(scriptSrc).toBe(`script-src 'sha256-${createHash('sha256').update(scripts[0]!).digest('base64')}'`)
    })

    it.skipIf(!chromium)('Chromium runs that script (sorting works) and reports no violation', async () => {
      const {browser, page, problems} = await openReport(chromium!, path.join(work, 'report.html'))
      try {
        await page.click('#classes thead th')
        expect(await page.$eval('#classes thead th', th => th.getAttribute('aria-sort'))).not.toBeNull()
        expect(problems).toEqual([])
      } finally {
        await browser.close()
      }
    }, 60_000)
  })
})
