import {execFileSync, spawn, spawnSync} from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {programHeaderTable} from '../helpers/cut-segment.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'
import {indexLayout} from '../helpers/index-layout.js'

// Issue 29, "Files and inputs": what an attacker (or a slip of the user's) can do with the files
// toma reads and writes, each tried on copies of a real fixture core: v2.10-shared, a gcore of
// fixtures/programs/heapdemo.cpp on Debian 12's gperftools 2.10 (the demo core).
const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))
const HOSTILE = fileURLToPath(new URL('../../fixtures/hostile', import.meta.url))
const COMPRESSED = fileURLToPath(new URL('../../fixtures/compressed', import.meta.url))
const entry = fixtureIndex().find(f => f.id === 'v2.10-shared')!
const moduleFlags = () => {
  const f = fixtureFlags(entry)
  return ['--exe', f.exe, ...(f.tcmalloc ? ['--tcmalloc', f.tcmalloc] : [])]
}
const isRoot = process.geteuid?.() === 0
const md5 = (file: string) => crypto.createHash('md5').update(fs.readFileSync(file)).digest('hex')
/** Names of toma's temporaries (and of the predictable ones older versions used). */
const TEMPORARY = /\.toma-tmp-\d+-[0-9a-f]{16}$|\.tmp-\d+$|\.partial-\d+$/
const temporariesIn = (dir: string) => fs.readdirSync(dir).filter(n => TEMPORARY.test(n))

let root: string
let rawCore: string
/** `analyze --json` of the untouched core: what every harmless change must still answer. */
let rawSummary: {states: unknown; graph: {roots: unknown; scannedBytes: number}}

beforeAll(async () => {
  root = testTemp('toma-hostile-')
  rawCore = await fixtureCorePath(entry.id)
  const dir = folder('raw')
  const r = await runToma(['analyze', copyCore(dir), ...moduleFlags(), '--json'], {cwd: dir})
  expect(r.status, r.stderr).toBe(0)
  rawSummary = JSON.parse(r.stdout)
})
afterAll(() => fs.rmSync(root, {recursive: true, force: true}))

function folder(name: string): string {
  const dir = path.join(root, name)
  fs.mkdirSync(dir)
  return dir
}

function copyCore(dir: string, name = 'core'): string {
  const file = path.join(dir, name)
  fs.copyFileSync(rawCore, file)
  return file
}

describe('1. an output that is an input, or another kind of file', () => {
  it('--index naming the core or the executable is refused; both stay intact', async () => {
    const dir = folder('output-is-input')
    const core = copyCore(dir)
    const exe = path.join(dir, 'heapdemo')
    fs.copyFileSync(fixtureFlags(entry).exe, exe)
    const before = [md5(core), md5(exe)]
    for (const [target, force] of [[core, false], [exe, false], [exe, true], [path.join(dir, 'link-to-core'), true]] as const) {
      if (target.endsWith('link-to-core')) fs.symlinkSync(core, target)
      const r = await runToma(['analyze', core, '--exe', exe, '--tcmalloc', fixtureFlags(entry).tcmalloc!, '--index', target, ...(force ? ['--force'] : [])], {cwd: dir})
      expect(r.status).toBe(2)
      expect(r.stderr).toMatch(/^toma: .* one of this command's inputs: refusing to write the toma index over it\n$/)
    }
    expect([md5(core), md5(exe)]).toEqual(before)
  })

  it('report -o CORE is refused; an existing file of another kind needs --force; a report of its own kind is replaced', async () => {
    const dir = folder('report-over')
    const core = copyCore(dir)
    const sum = md5(core)
    let r = await runToma(['report', core, ...moduleFlags(), '-o', core], {cwd: dir})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/refusing to write the HTML report of toma over it\n$/)
    expect(md5(core)).toBe(sum)
    const notes = path.join(dir, 'notes.html')
    fs.writeFileSync(notes, '<!DOCTYPE html><p>my own notes</p>')
    r = await runToma(['report', core, '-o', notes], {cwd: dir})
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`toma: ${notes} exists and is not a HTML report of toma: refusing to replace it (give --force to replace it)\n`)
    expect(fs.readFileSync(notes, 'utf8')).toBe('<!DOCTYPE html><p>my own notes</p>')
    r = await runToma(['report', core, '-o', notes, '--force'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    r = await runToma(['report', core, '-o', notes], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(fs.readFileSync(notes, 'utf8')).toContain('<meta name="generator" content="toma">')
    expect(temporariesIn(dir)).toEqual([])
  })
})

describe('2. symlinks planted where toma writes', () => {
  it('a symlink at the index path, in ./.toma, or at .toma/cores is never followed', async () => {
    const dir = folder('symlinks')
    const victimDir = folder('symlink-victims')
    const victim = path.join(victimDir, 'victim')
    fs.writeFileSync(victim, 'precious')
    // The final name of the index, linked to the victim: toma sees a file of another kind there.
    const core = copyCore(dir)
    fs.symlinkSync(victim, core + '.toma-index')
    let r = await runToma(['analyze', core, ...moduleFlags()], {cwd: dir})
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/is not a toma index: refusing to replace it/)
    // With --force the link itself is replaced by the index (rename), not the file it points to.
    r = await runToma(['analyze', core, ...moduleFlags(), '--force'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(fs.lstatSync(core + '.toma-index').isFile()).toBe(true)
    // ./.toma/last.json as a link: replaced by rename, the victim untouched.
    fs.rmSync(path.join(dir, '.toma', 'last.json'))
    fs.symlinkSync(victim, path.join(dir, '.toma', 'last.json'))
    r = await runToma(['analyze', core, ...moduleFlags()], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(fs.lstatSync(path.join(dir, '.toma', 'last.json')).isFile()).toBe(true)
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious')
    // A compressed core whose .toma/cores is a link to another folder: the copy goes to the cache folder instead.
    const zdir = folder('symlink-cores')
    const zst = path.join(zdir, 'core.zst')
    fs.copyFileSync(path.join(COMPRESSED, `${entry.id}.core.zst`), zst)
    fs.mkdirSync(path.join(zdir, '.toma'))
    fs.symlinkSync(victimDir, path.join(zdir, '.toma', 'cores'))
    const cache = folder('symlink-cache')
    r = await runToma(['info', zst], {cwd: zdir, env: {XDG_CACHE_HOME: cache}})
    expect(r.status, r.stderr).toBe(0)
    expect(fs.readdirSync(victimDir)).toEqual(['victim'])
    expect(fs.readdirSync(path.join(cache, 'toma', 'cores')).filter(n => n.endsWith('.core'))).toHaveLength(1)
    expect(temporariesIn(dir)).toEqual([])
  })
})

describe('3. a decompressed copy changed after it was made', () => {
  it('edited by one byte, or cut short, it is found changed, said so, and made again', async () => {
    const dir = folder('tampered')
    const zst = path.join(dir, 'core.zst')
    fs.copyFileSync(path.join(COMPRESSED, `${entry.id}.core.zst`), zst)
    let r = await runToma(['info', zst], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    const copy = fs.readdirSync(path.join(dir, '.toma', 'cores')).find(n => n.endsWith('.core'))!
    const copyPath = path.join(dir, '.toma', 'cores', copy)
    const fd = fs.openSync(copyPath, 'r+')
    fs.writeSync(fd, Buffer.from('X'), 0, 1, entry.coreBytes >> 1)
    fs.closeSync(fd)
    r = await runToma(['info', zst], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/^toma: the decompressed copy .* was changed since it was made \(its inode, change or modification time differ\); decompressing .*core\.zst again\n$/)
    expect(md5(copyPath)).toBe(md5(rawCore))
    fs.truncateSync(copyPath, 1_000_000)
    r = await runToma(['info', zst], {cwd: dir})
    expect(r.stderr).toMatch(/was changed since it was made \(1000000 bytes, made \d+: cut short or grown\)/)
    expect(md5(copyPath)).toBe(md5(rawCore))
  })
})

describe('4. a segment whose memory size the file does not hold', () => {
  it('is read only as far as its file bytes: the tail is absent, not gigabytes of zeros to scan, and the answer is unchanged', async () => {
    const dir = folder('huge-memsz')
    const core = copyCore(dir)
    // The highest writable segment (the main thread's stack) made to reach the end of user space:
    // what a hostile core did to make a 31 MB core scan for hours.
    const grown = growLastWritableSegment(core)
    expect(grown.tail).toBeGreaterThan(2 ** 31)
    const started = Date.now()
    const r = await runToma(['analyze', core, ...moduleFlags(), '--json'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(Date.now() - started).toBeLessThan(60_000)
    const got = JSON.parse(r.stdout)
    expect(got.states).toEqual(rawSummary.states)
    expect(got.graph.roots).toEqual(rawSummary.graph.roots)
    expect(got.warnings.list.map((w: {message: string}) => w.message)).toContainEqual(
      expect.stringMatching(new RegExp(`^the core holds ${grown.fileSize} of the ${grown.memSize} bytes of writable segment 0x${grown.vaddr.toString(16)}-.*: the rest is absent, not read or scanned$`)),
    )
  })
})

/** Sets the p_memsz of the core's highest writable PT_LOAD below 2^47 so that it ends at 2^47 - 4 KiB. */
function growLastWritableSegment(core: string): {vaddr: number; fileSize: number; memSize: number; tail: number} {
  const fd = fs.openSync(core, 'r+')
  try {
    const {phoff, phnum} = programHeaderTable(fd)
    const table = Buffer.alloc(phnum * 56)
    fs.readSync(fd, table, 0, table.length, phoff)
    let best = -1
    for (let i = 0; i < phnum; i++) {
      const at = i * 56
      const vaddr = Number(table.readBigUInt64LE(at + 16))
      const end = vaddr + Number(table.readBigUInt64LE(at + 40))
      if (table.readUInt32LE(at) === 1 && table.readUInt32LE(at + 4) & 2 && end < 2 ** 47 && (best < 0 || vaddr > Number(table.readBigUInt64LE(best * 56 + 16)))) best = i
    }
    const at = best * 56
    const vaddr = Number(table.readBigUInt64LE(at + 16))
    const fileSize = Number(table.readBigUInt64LE(at + 32))
    const memSize = 2 ** 47 - 4096 - vaddr
    table.writeBigUInt64LE(BigInt(memSize), at + 40)
    fs.writeSync(fd, table, at, 56, phoff + at)
    return {vaddr, fileSize, memSize, tail: memSize - fileSize}
  } finally {
    fs.closeSync(fd)
  }
}

describe('5. a FIFO as a core, an executable or a file of the sysroot', () => {
  it('is refused at once in one line, never waited on', async () => {
    const dir = folder('fifo')
    const fifo = path.join(dir, 'f')
    execFileSync('mkfifo', [fifo])
    const core = copyCore(dir)
    for (const args of [['analyze', fifo], ['info', fifo], ['analyze', core, '--exe', fifo]]) {
      const started = Date.now()
      const r = await runToma(args, {cwd: dir})
      expect(Date.now() - started).toBeLessThan(30_000)
      expect(r.status, args.join(' ')).toBe(2)
      expect(r.stderr).toMatch(/^toma: .*f: not a regular file( \(a FIFO\))?\n$/)
    }
    // In a sysroot, the library at the core's path is a FIFO: not found there, said in a warning.
    const sysroot = path.join(dir, 'sysroot')
    const lib = JSON.parse((await runToma(['info', core, '--json'], {cwd: dir})).stdout).modules.find((m: {path: string}) => /libtcmalloc/.test(m.path)).path as string
    fs.mkdirSync(path.join(sysroot, path.dirname(lib)), {recursive: true})
    execFileSync('mkfifo', [path.join(sysroot, lib)])
    const started = Date.now()
    const r = await runToma(['info', core, '--sysroot', sysroot], {cwd: dir})
    expect(Date.now() - started).toBeLessThan(30_000)
    expect(r.status === 0 || r.stderr.split('\n').filter(Boolean).length === 1, r.stderr).toBe(true)
  })
})

describe('6. a compression bomb', () => {
  const BOMB = path.join(HOSTILE, 'zeros-2g.zst')

  it('2 GiB of zeros in a 66 KB .zst stops at its first bytes: not a core, no copy left', async () => {
    const dir = folder('bomb')
    const bomb = path.join(dir, 'core.zst')
    fs.copyFileSync(BOMB, bomb)
    const r = await runToma(['analyze', bomb], {cwd: dir})
    expect(r.status).toBe(2)
    expect(r.stderr).toBe(`toma: ${bomb}: zstd data cut short, damaged or not a core (the decompressed data is not an ELF file)\n`)
    expect(fs.readdirSync(path.join(dir, '.toma', 'cores'))).toEqual([])
  })

  it('a real core followed by 2 GiB of zeros is decompressed up to the core\'s extent (plus 1 MiB), and reads as the core', async () => {
    const dir = folder('bomb-tail')
    const file = path.join(dir, 'core.zst')
    fs.writeFileSync(file, Buffer.concat([fs.readFileSync(path.join(COMPRESSED, `${entry.id}.core.zst`)), fs.readFileSync(BOMB)]))
    const r = await runToma(['analyze', file, ...moduleFlags(), '--json'], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout).states).toEqual(rawSummary.states)
    const copy = fs.readdirSync(path.join(dir, '.toma', 'cores')).find(n => n.endsWith('.core'))!
    expect(fs.statSync(path.join(dir, '.toma', 'cores', copy)).size).toBe(entry.coreBytes + 2 ** 20)
  })

  it('a disk below the free-space reserve is not written to: one line, exit 74, no copy', async () => {
    const dir = folder('bomb-space')
    const file = path.join(dir, 'core.zst')
    fs.copyFileSync(path.join(COMPRESSED, `${entry.id}.core.zst`), file)
    const r = await runToma(['info', file], {cwd: dir, env: {TOMA_FREE_SPACE_RESERVE: String(2 ** 52)}})
    expect(r.status).toBe(74)
    expect(r.stderr).toMatch(/^toma: .*core\.zst: cannot decompress it into .*: the disk holding .* MiB free, under toma's reserve of \d+ MiB: stopped after writing 0 MiB; free some space or decompress the core on another disk\n$/)
    expect(fs.readdirSync(path.join(dir, '.toma', 'cores'))).toEqual([])
  })
})

describe('7. outputs that cannot be written', () => {
  let dir: string
  let core: string
  beforeAll(async () => {
    dir = folder('outputs')
    core = copyCore(dir)
    const r = await runToma(['analyze', core, ...moduleFlags()], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
  })

  it('a full standard output (/dev/full) is one line and exit 74, not a stack trace', () => {
    const full = fs.openSync('/dev/full', 'w')
    try {
      for (const env of [{}, {TOMA_OCLIF: '1'}]) {
        const r = spawnSync(process.execPath, [BIN, 'classes', core], {cwd: dir, stdio: ['ignore', full, 'pipe'], env: {...process.env, NO_COLOR: '1', ...env}, encoding: 'utf8'})
        expect(r.status).toBe(74)
        expect(r.stderr).toBe('toma: cannot write standard output: no space left on the disk (ENOSPC)\n')
      }
    } finally {
      fs.closeSync(full)
    }
  })

  it('-o in a folder that is not there is one line and exit 74', async () => {
    const r = await runToma(['export', core, '--format', 'json', '-o', path.join(dir, 'nonexistent', 'd', 'g.json')], {cwd: dir})
    expect(r.status).toBe(74)
    expect(r.stderr).toMatch(/^toma: .*g\.json: cannot write: no such folder \(ENOENT\)\n$/)
  })

  it('a reader that closes the pipe early ends toma quietly with exit 0', async () => {
    const child = spawn(process.execPath, [BIN, 'export', core, '--format', 'json'], {cwd: dir, env: {...process.env, NO_COLOR: '1'}})
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', d => (stderr += d))
    // `| head -c100`: read the first bytes, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy())
    const status = await new Promise(resolve => child.on('close', resolve))
    expect(status).toBe(0)
    expect(stderr).toBe('')
  })

  it.skipIf(!isRoot)('a full disk under -o leaves no partial file: one line, exit 74', async () => {
    const mount = folder('full-disk')
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mount])
    try {
      const r = await runToma(['export', core, '--format', 'json', '-o', path.join(mount, 'g.json')], {cwd: dir})
      expect(r.status).toBe(74)
      expect(r.stderr).toBe(`toma: ${path.join(mount, 'g.json')}: cannot write: no space left on the disk (ENOSPC)\n`)
      expect(fs.readdirSync(mount)).toEqual([])
    } finally {
      execFileSync('umount', [mount])
    }
  })
})

describe('8. interrupted runs', () => {
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGKILL'] as const)('an analysis killed by %s leaves no temporary file, and no index but a whole one of the stage it finished', async signal => {
    const dir = folder(`killed-${signal}`)
    const core = copyCore(dir)
    const child = spawn(process.execPath, [BIN, 'analyze', core, ...moduleFlags()], {cwd: dir, env: {...process.env, NO_COLOR: '1', TOMA_MALLOC: 'system'}, stdio: 'ignore'})
    const closed = new Promise(resolve => child.on('close', resolve))
    // Killed once its temporary index exists, mid-analysis.
    const seen = await waitFor(() => temporariesIn(dir).length > 0, 60_000)
    expect(seen).toBe(true)
    child.kill(signal)
    await closed
    expect(await waitFor(() => temporariesIn(dir).length === 0, 10_000)).toBe(true)
    // Killed in the graph stage, the model stage's index stays: whole, and saying it holds the model alone.
    if (fs.existsSync(core + '.toma-index')) expect(indexLayout(fs.readFileSync(core + '.toma-index')).header.stages).toEqual(['model'])
  })

  it("a later run sweeps the temporaries of toma processes that are gone, and leaves others' files", async () => {
    const dir = folder('stale')
    const core = copyCore(dir)
    const dead = spawnSync('true').pid!
    const stale = [`.core.toma-index.toma-tmp-${dead}-0123456789abcdef`, `core.toma-index.tmp-${dead}`]
    for (const name of stale) fs.writeFileSync(path.join(dir, name), 'stale')
    const alive = `.x.toma-tmp-${process.pid}-0123456789abcdef`
    fs.writeFileSync(path.join(dir, alive), 'a running process')
    fs.symlinkSync('/etc/hostname', path.join(dir, `.y.toma-tmp-${dead}-0123456789abcdef`))
    const r = await runToma(['analyze', core, ...moduleFlags()], {cwd: dir})
    expect(r.status, r.stderr).toBe(0)
    expect(fs.readdirSync(dir).filter(n => n.includes('tmp')).sort()).toEqual([alive, `.y.toma-tmp-${dead}-0123456789abcdef`].sort())
  })
})

describe('11. no writable place for the index', () => {
  it.skipIf(!isRoot)('the core in a read-only folder and no cache folder: one line naming --index', async () => {
    const dir = folder('read-only')
    const core = copyCore(dir)
    execFileSync('mount', ['--bind', dir, dir])
    try {
      execFileSync('mount', ['-o', 'remount,bind,ro', dir])
      const r = await runToma(['analyze', core, ...moduleFlags()], {cwd: root, env: {XDG_CACHE_HOME: path.join(dir, 'cache'), HOME: dir}})
      expect(r.status).toBe(2)
      expect(r.stderr).toMatch(/^toma: no place to write the index of .*core: its folder is not writable, and the cache folder .* cannot be created \((EROFS|ENOENT)\); give --index FILE in a writable folder\n$/)
    } finally {
      execFileSync('umount', [dir])
    }
  })
})

async function waitFor(done: () => boolean, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise(r => setTimeout(r, 20))) if (done()) return true
  return done()
}
