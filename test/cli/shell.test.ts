import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {Config} from '@oclif/core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {IndexSession, setActiveSession} from '../../src/cli/index-session.js'
import {openIndex} from '../../src/cli/open-index.js'
import {completionSource} from '../../src/cli/shell.js'
import {completeLine, type CompletionSource} from '../../src/cli/shell-completion.js'
import {appendHistory, HISTORY_LINES, loadHistory} from '../../src/cli/shell-history.js'
import {shellWords} from '../../src/cli/shell-words.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {FIXTURES, PAIRS, pairCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const ID = 'v2.10-diff'

describe('toma shell', () => {
  let work: string
  let core: string
  let holder: string
  const env = () => ({XDG_CACHE_HOME: path.join(work, 'cache')})

  beforeAll(async () => {
    work = testTemp('toma-shell-')
    core = path.join(work, 'core')
    fs.copyFileSync(await pairCorePath(ID, 'after'), core)
    holder = JSON.parse(fs.readFileSync(path.join(PAIRS, ID, 'truth.json'), 'utf8')).holder.address
    const flags = ['--exe', path.join(PAIRS, ID, 'diffdemo'), '--tcmalloc', path.join(FIXTURES, 'v2.10-shared', 'libtcmalloc.so.4')]
    const r = await runToma(['analyze', core, ...flags, '--json'], {cwd: work, env: env()})
    expect(r.status, r.stderr).toBe(0)
  })
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  it('answers lines from stdin exactly as the CLI answers the same queries, and goes on after a bad line', async () => {
    const queries = [['classes'], ['top', '--by', 'type', '--limit', '3'], ['find-object', holder, '--json'], ['refs', holder], ['dominators', holder, '--depth', '1', '--json'], ['threads']]
    const cli: string[] = []
    for (const q of queries) {
      const r = await runToma([...q, core], {cwd: work, env: env()})
      expect(r.status, r.stderr).toBe(0)
      cli.push(r.stdout)
    }
    const lines = queries.map(q => q.join(' '))
    // A bad command, a command's own error and an unterminated quote: one line each, then on.
    lines.splice(2, 0, 'clases', 'find-object 0x1 --depth 9', '"unterminated')
    const r = await runToma(['shell', core], {cwd: work, env: env(), input: [...lines, 'exit', 'classes'].join('\n') + '\n'})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(cli.join(''))
    expect(r.stderr.trim().split('\n')).toEqual([
      'toma: clases is not a toma command; did you mean classes? (help lists them)',
      expect.stringMatching(/^toma: .*--depth/),
      'toma: unterminated " quote; the line was not run',
    ])
  })

  it('prints a command\'s help for `help CMD` and `CMD --help`, as `toma help CMD` does', async () => {
    const cli = await runToma(['help', 'top'], {cwd: work, env: env()})
    expect(cli.status, cli.stderr).toBe(0)
    expect(cli.stdout).toMatch(/^USAGE$/m)
    const r = await runToma(['shell', core], {cwd: work, env: env(), input: 'help top\ntop --help\nhelp tpo\n'})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toBe(cli.stdout + cli.stdout)
    expect(r.stderr).toBe('toma: tpo is not a toma command; did you mean top? (help lists them)\n')
  })

  it('keeps one opened index for the queries of a sitting', async () => {
    const session = new IndexSession(core)
    setActiveSession(session)
    try {
      const notes: string[] = []
      const first = await openIndex(undefined, {}, n => notes.push(n))
      expect(await openIndex(core, {}, n => notes.push(n))).toBe(first)
      expect(await openIndex(undefined, {}, n => notes.push(n))).toBe(first)
      expect(notes).toEqual([])
    } finally {
      session.forget()
      setActiveSession(null)
    }
  })

  describe('completion', () => {
    let source: CompletionSource
    let types: string[]
    beforeAll(async () => {
      const index = HeapIndex.open(core + '.toma-index')!
      types = index.meta.typeNames
      index.file.close()
      source = completionSource(await Config.load(ROOT), types)
    })

    it('completes command names, with the shell\'s own words', () => {
      expect(completeLine('cl', source)).toEqual([['classes'], 'cl'])
      expect(completeLine('d', source)).toEqual([['damage', 'diff', 'dominators'], 'd'])
      expect(completeLine('', source)[0]).toEqual(expect.arrayContaining(['analyze', 'classes', 'top', 'exit', 'quit', 'help']))
      expect(completeLine('', source)[0]).not.toContain('shell')
      expect(completeLine('help fi', source)).toEqual([['find-object'], 'fi'])
    })

    it('completes flags and their allowed values', () => {
      expect(completeLine('top --b', source)).toEqual([['--by'], '--b'])
      expect(completeLine('top --by ', source)).toEqual([['object', 'type'], ''])
      expect(completeLine('top --by t', source)).toEqual([['type'], 't'])
      expect(completeLine('classes --ex', source)).toEqual([['--exe'], '--ex'])
      expect(completeLine('nosuch --ex', source)).toEqual([[], '--ex'])
    })

    it('completes the index\'s type names, not addresses or paths', () => {
      expect(types).toEqual(expect.arrayContaining(['app::Entry', 'app::Stale', 'app::Other', 'app::Cache']))
      expect(completeLine('classes app::', source)).toEqual([['app::Cache', 'app::Entry', 'app::Other', 'app::Stale'], 'app::'])
      expect(completeLine('classes app::S', source)).toEqual([['app::Stale'], 'app::S'])
      expect(completeLine('find-object 0x5', source)).toEqual([[], '0x5'])
      expect(completeLine('classes ./co', source)).toEqual([[], './co'])
      const spaced = {...source, types: ['std::map<int, app::Entry>']}
      expect(completeLine('classes std::', spaced)).toEqual([["'std::map<int, app::Entry>'"], 'std::'])
    })
  })

  it('keeps its history in a file, newest first, cut to the last lines', () => {
    const file = path.join(testTemp('toma-history-'), 'shell-history')
    expect(loadHistory(file)).toEqual([])
    appendHistory('classes', file)
    appendHistory('top --by type', file)
    expect(loadHistory(file)).toEqual(['top --by type', 'classes'])
    for (let i = 0; i < 2 * HISTORY_LINES + 1; i++) appendHistory(`refs ${i}`, file)
    const kept = loadHistory(file)
    expect(kept).toHaveLength(HISTORY_LINES)
    expect(kept[0]).toBe(`refs ${2 * HISTORY_LINES}`)
    expect(fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length).toBeLessThanOrEqual(2 * HISTORY_LINES)
  })

  it('splits a line into words as a POSIX shell does', () => {
    expect(shellWords(`top  --by type`)).toEqual({words: ['top', '--by', 'type']})
    expect(shellWords(`find-object 0x10 'my core' "a \\"b\\"" c\\ d`)).toEqual({words: ['find-object', '0x10', 'my core', 'a "b"', 'c d']})
    expect(shellWords(`x 'open`)).toEqual({problem: "unterminated ' quote"})
  })
})
