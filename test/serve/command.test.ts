import {spawn} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {copyDiffPair, diffPairFlags} from '../helpers/diff-pair.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {request} from '../helpers/serve-fixture.js'
import {sharedAnalysis} from '../helpers/shared-analysis.js'
import {testTemp} from '../helpers/test-temp.js'

// `toma serve` as a user starts it: one line on stdout, pages over HTTP, Ctrl-C ends it with 0,
// and it writes nothing.
const ID = 'v2.10-shared'
const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

/** Starts `toma serve ARGS` and resolves once its first line is out (or it ended). */
function startServe(args: string[], cwd: string) {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {cwd, env: {...process.env, NO_COLOR: '1'}})
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', d => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', d => (stderr += d))
  const ended = new Promise<number | null>(resolve => child.on('close', code => resolve(code)))
  const firstLine = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => stdout.includes('\n') && resolve(stdout.split('\n')[0]!))
    void ended.then(() => reject(new Error(`toma serve ended: ${stderr}`)))
  })
  return {child, firstLine, ended, out: () => ({stdout, stderr})}
}

describe(`toma serve on ${ID}`, () => {
  let work: string
  let indexPath: string
  beforeAll(async () => {
    work = testTemp('toma-serve-')
    const f = fixtureFlags(fixtureIndex().find(e => e.id === ID)!)
    indexPath = (await sharedAnalysis(await fixtureCorePath(ID), ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])])).index
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('prints one URL, serves its pages, writes nothing, and ends with 0 on Ctrl-C', async () => {
    const before = fs.statSync(indexPath)
    const s = startServe([indexPath], work)
    try {
      const url = new URL(await s.firstLine)
      expect(url.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const port = Number(url.port)
      const entered = await request(port, {path: url.pathname + url.search})
      expect(entered.status).toBe(303)
      const cookie = String(entered.headers['set-cookie']?.[0]).split(';')[0]!
      for (const p of ['/', '/classes', '/threads']) expect((await request(port, {path: p, headers: {cookie}})).status, p).toBe(200)
      s.child.kill('SIGINT')
      expect(await s.ended).toBe(0)
      expect(s.out().stdout).toBe(`${url.href}\n`)
      expect(s.out().stderr).toBe('')
      // Closed: nothing listens any more.
      await expect(request(port, {path: '/'})).rejects.toThrow(/ECONNREFUSED/)
    } finally {
      s.child.kill('SIGKILL')
    }
    expect(fs.readdirSync(work)).toEqual([])
    const after = fs.statSync(indexPath)
    expect([after.mtimeMs, after.size, after.ino]).toEqual([before.mtimeMs, before.size, before.ino])
  })

  it('ends with 0 on SIGTERM too; a non-loopback --listen is said on stderr', async () => {
    const s = startServe([indexPath, '--listen', '0.0.0.0:0'], work)
    try {
      const url = new URL(await s.firstLine)
      expect(url.hostname).toBe('0.0.0.0')
      s.child.kill('SIGTERM')
      expect(await s.ended).toBe(0)
      expect(s.out().stderr).toMatch(/^toma: warning: listening on 0\.0\.0\.0, not loopback: .*\n$/)
    } finally {
      s.child.kill('SIGKILL')
    }
  })

  it('given two cores, the diff page says what the process added and freed between them', async () => {
    const pair = testTemp('toma-serve-diff-')
    try {
      const {before, after, truth} = await copyDiffPair(pair)
      const s = startServe([after, before, ...diffPairFlags, '--quiet'], pair)
      try {
        const url = new URL(await s.firstLine)
        const port = Number(url.port)
        const cookie = String((await request(port, {path: url.pathname + url.search})).headers['set-cookie']?.[0]).split(';')[0]!
        const body = (await request(port, {path: '/diff', headers: {cookie}})).body
        // A row: the type, then born, born bytes, died, died bytes, kept, kept bytes, net, net bytes.
        const row = (type: string) => {
          const m = new RegExp(`<tr><td>${type.replace(/[<>]/g, c => (c === '<' ? '&lt;' : '&gt;'))}</td>((?:<td class="n" data-v="-?\\d+">[^<]*</td>)+)</tr>`).exec(body)
          return m ? [...m[1]!.matchAll(/data-v="(-?\d+)"/g)].map(x => Number(x[1])) : null
        }
        const {born, died} = truth.change
        expect(row(born.type)?.slice(0, 4)).toEqual([born.count, born.count * truth.sizes[born.type]!, 0, 0])
        expect(row(died.type)?.slice(2, 4)).toEqual([died.count, died.count * truth.sizes[died.type]!])
        s.child.kill('SIGINT')
        expect(await s.ended).toBe(0)
      } finally {
        s.child.kill('SIGKILL')
      }
    } finally {
      fs.rmSync(pair, {recursive: true, force: true})
    }
  })

  it('refuses a bad --listen with one line, before opening anything', async () => {
    const r = await runToma(['serve', path.join(work, 'no-such-core'), '--listen', 'localhost:80'], {cwd: work})
    expect(r.status).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^toma: --listen localhost:80: expected an IP address and a port.*\n$/)
  })
})
