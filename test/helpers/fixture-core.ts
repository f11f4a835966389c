import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {pipeline} from 'node:stream/promises'
import {fileURLToPath} from 'node:url'
import zlib from 'node:zlib'
import {Core} from '../../src/core/core.js'
import {ElfFile} from '../../src/elf/elf-file.js'
import {Program} from '../../src/program/program.js'
import {buildOnce} from './build-once.js'
import {testTempRoot} from './test-temp.js'

export const FIXTURES = fileURLToPath(new URL('../../fixtures/cores', import.meta.url))
/** Debian library files some fixtures ran with (brotli-compressed, `<suite>/<file>.br`), see fixtures/README.md. */
export const SYSROOT_FILES = fileURLToPath(new URL('../../fixtures/sysroots', import.meta.url))

export interface FixtureEntry {
  id: string
  gperftools: string
  config: 'shared' | 'minimal' | 'static' | 'stripped' | 'preload' | 'sampled'
  exe: string
  tcmalloc: string | null
  threads: number
  coreBytes: number
  /** TCMalloc page size in KiB when not 8 (source builds configured --with-tcmalloc-pagesize). */
  pageKiB?: number
  /** Fixtures built from a gperftools tag's sources (fixtures/generate-source.sh): the tag, page size, environment. */
  build?: {source: string; pageKiB: number; env?: string}
}

/** Where the only root of a manifest object lies (fixtures/README.md, "heldBy"). */
export type HeldBy =
  | null
  | {kind: 'stack'; tid: number}
  | {kind: 'global'; symbol: string}
  /** An anonymous mapping [start, end) (the pool); the pointer is at start + offset. */
  | {kind: 'mapping'; start: string; end: string; offset: number}
  /** The cached stack [start, end) of a thread that exited (glibc's stack cache). */
  | {kind: 'cachedStack'; start: string; end: string}

/** One frame of gdb's backtrace of a thread in the core (the reference unwinder). */
export interface GdbFrame {
  level: number
  pc: string
  /** gdb's function name, null when gdb has none. */
  function: string | null
  /** gdb's "frame at" (the CFA). */
  cfa: string
  /** gdb's frame type: 'normal', or one gdb synthesised from debug info: 'inline' (an inlined call:
   *  same pc and CFA as the frame it is inlined into), 'tailcall' (a caller that tail-called). */
  type: 'normal' | 'inline' | 'tailcall' | 'sigtramp' | string
}

/** Ground truth the fixture process recorded about itself (fixtures/README.md). */
export interface Truth {
  pid: number
  gperftools: string
  hookMethod: string
  preHookAllocatedBytes: number
  unknownFrees: {count: number; bytes: number | null}
  threads: Array<{
    tid: number
    pthread: string
    role: string
    /** The function given to pthread_create (null for main). */
    startRoutine: string | null
    startArg: string | null
    /** Workers: the thread's stack mapping, as pthread_getattr_np reports it. */
    stackStart?: string
    stackEnd?: string
  }>
  counters: Record<string, number>
  /** Sampled fixtures only: MallocExtension::GetHeapSample's text, taken just before the freeze. */
  heapSample?: string
  live: Array<[string, number]>
  objects: Array<{
    name: string
    address: string
    size: number
    class: string | null
    pointers: Array<{offset: number; to: string; toOffset: number}>
    leaked: boolean
    heldBy: HeldBy
  }>
  /** The anonymous mapping that holds the only pointers to poolHeld0..2. */
  pool: {start: string; end: string}
  /** The thread that exited before the dump; its stack is in glibc's stack cache. */
  exitedThread: {tid: number; stackStart: string; stackEnd: string}
  /** Many objects of one type under one holder (issue 9). */
  accumulation: {symbol: string; holder: string; holderClass: string; type: string; count: number; bytesEach: number}
  /** A returned frame below a parked worker's rsp that still holds the only pointers to deadFrame0..2:
   *  `pointers` are the stack addresses of those words, `targets` the objects they point to. */
  deadFrame: {tid: number; function: string; pointers: string[]; targets: string[]}
  /** gdb's view of every thread's stack, by tid. */
  gdbStacks: Array<{tid: number; frames: GdbFrame[]}>
  magic: Array<{address: string; value: string; where: string}>
}

export function fixtureIndex(): FixtureEntry[] {
  const file = path.join(FIXTURES, 'index.json')
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as FixtureEntry[]) : []
}

/**
 * Where unpacked fixture files are cached: under the run's temp root (removed when the run ends),
 * or in TOMA_FIXTURE_CACHE when a developer wants them kept between runs.
 */
function fixtureCache(): string {
  const dir = process.env.TOMA_FIXTURE_CACHE || path.join(testTempRoot(), 'fixtures')
  fs.mkdirSync(dir, {recursive: true})
  return dir
}

const contentHash = (file: string) => crypto.createHash('sha1').update(fs.readFileSync(file)).digest('hex').slice(0, 12)

/** Decompresses a .br file to `out` once in the run (test workers asking at the same time wait for the first). */
function unpackOnce(br: string, out: string): Promise<string> {
  fs.mkdirSync(path.dirname(out), {recursive: true})
  return buildOnce(out, tmp => pipeline(fs.createReadStream(br), zlib.createBrotliDecompress(), fs.createWriteStream(tmp, {flags: 'wx'})))
}

/** fixtures/tools/sparse-core.mjs: the format of a core stored as its data pages (core.sparse.br). */
const SPARSE_CORE_TOOL = new URL('../../fixtures/tools/sparse-core.mjs', import.meta.url).href

/**
 * Unpacks a core.sparse.br (fixtures/tools/sparse-core.mjs) once into the fixture cache, its zero
 * pages left as holes: cores of google/tcmalloc programs are gigabytes of zero-filled reservations
 * around tens of MB of data, and only the data is stored and decompressed.
 */
export async function sparseCorePath(file: string): Promise<string> {
  const name = path.relative(path.join(FIXTURES, '..'), file).replace(/[^A-Za-z0-9.-]+/g, '_')
  const out = path.join(fixtureCache(), `${name}-${contentHash(file)}.core`)
  const {unpackSparseCore} = (await import(SPARSE_CORE_TOOL)) as {unpackSparseCore: (input: string, output: string) => Promise<number>}
  return buildOnce(out, tmp => unpackSparseCore(file, tmp).then(() => undefined))
}

/** Decompresses a fixture's core.br once into the fixture cache (keyed by content hash) and returns its path. */
export async function fixtureCorePath(id: string): Promise<string> {
  const br = path.join(FIXTURES, id, 'core.br')
  return unpackOnce(br, path.join(fixtureCache(), `${id}-${contentHash(br)}.core`))
}

/** Decompresses any committed `.br` core (fixtures outside cores/: crashes, programs of others) once into the fixture cache. */
export async function brotliCorePath(br: string): Promise<string> {
  const name = path.relative(path.join(FIXTURES, '..'), br).replace(/[^A-Za-z0-9.-]+/g, '_')
  return unpackOnce(br, path.join(fixtureCache(), `${name}-${contentHash(br)}.core`))
}

/**
 * Unpacks every `.br` file under `dir` once into the fixture cache, at the same relative paths
 * without `.br` (a committed sysroot laid out as the process named its files), and returns the folder.
 */
export async function brotliTreePath(dir: string): Promise<string> {
  const files = fs.readdirSync(dir, {recursive: true, encoding: 'utf8'}).filter(f => f.endsWith('.br')).sort()
  const hash = crypto.createHash('sha1')
  for (const f of files) hash.update(f).update(contentHash(path.join(dir, f)))
  const name = path.relative(path.join(FIXTURES, '..'), dir).replace(/[^A-Za-z0-9.-]+/g, '_')
  const root = path.join(fixtureCache(), `${name}-${hash.digest('hex').slice(0, 12)}`)
  for (const f of files) await unpackOnce(path.join(dir, f), path.join(root, f.slice(0, -3)))
  return root
}

/** The diff pairs: one process dumped twice (fixtures/README.md, "The diff pair"). */
export const PAIRS = fileURLToPath(new URL('../../fixtures/pairs', import.meta.url))

/** Decompresses one core of a diff pair (`before` or `after`) once into the fixture cache and returns its path. */
export async function pairCorePath(id: string, which: 'before' | 'after'): Promise<string> {
  const br = path.join(PAIRS, id, `${which}.core.br`)
  return unpackOnce(br, path.join(fixtureCache(), `${id}-${which}-${contentHash(br)}.core`))
}

/**
 * A sysroot for a fixture whose libraries came from another Debian suite (2.16, 2.18.1): every
 * committed library file whose build-id is a module of the core, unpacked at the path the core
 * names it by (the generating machine's absolute path), under a cached folder. undefined when the
 * core has no such module (its libraries are the host's own).
 */
export async function fixtureSysroot(id: string, core: Core): Promise<string | undefined> {
  return sysrootOf(path.join(FIXTURES, id, 'core.br'), core)
}

/**
 * The same for any committed core (`br`, its .br file; `core`, it opened): the committed files
 * (fixtures/sysroots/SUITE/*.br) whose build-ids are its modules', at the paths it names them by.
 */
export async function sysrootOf(br: string, core: Core): Promise<string | undefined> {
  const byBuildId = new Map(core.modules.filter(m => m.buildId).map(m => [m.buildId!, m.path]))
  const name = path.relative(path.join(FIXTURES, '..'), br).replace(/[^A-Za-z0-9.-]+/g, '_')
  const root = path.join(fixtureCache(), `sysroot-${name}-${contentHash(br)}`)
  let placed = 0
  for (const suite of fs.existsSync(SYSROOT_FILES) ? fs.readdirSync(SYSROOT_FILES).sort() : []) {
    for (const name of fs.readdirSync(path.join(SYSROOT_FILES, suite)).filter(n => n.endsWith('.br')).sort()) {
      const br = path.join(SYSROOT_FILES, suite, name)
      const file = await unpackOnce(br, path.join(fixtureCache(), 'sysroot-files', suite, `${contentHash(br)}-${name.slice(0, -3)}`))
      const where = byBuildId.get(ElfFile.load(file).buildId ?? '')
      if (!where) continue
      const target = path.join(root, where)
      fs.mkdirSync(path.dirname(target), {recursive: true})
      await buildOnce(target, tmp => fs.copyFileSync(file, tmp, fs.constants.COPYFILE_EXCL))
      placed++
    }
  }
  return placed > 0 ? root : undefined
}

/** The module-file flags a user would give for this fixture. */
export function fixtureFlags(entry: FixtureEntry): {exe: string; tcmalloc?: string} {
  const dir = path.join(FIXTURES, entry.id)
  return {exe: path.join(dir, entry.exe), ...(entry.tcmalloc ? {tcmalloc: path.join(dir, entry.tcmalloc)} : {})}
}

export async function openFixture(id: string) {
  const entry = fixtureIndex().find(e => e.id === id)
  if (!entry) throw new Error(`no fixture ${id}`)
  const corePath = await fixtureCorePath(id)
  const core = Core.open(corePath)
  const sysroot = await fixtureSysroot(id, core)
  const program = Program.load(core, {...fixtureFlags(entry), ...(sysroot ? {sysroot} : {})})
  const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, id, 'truth.json'), 'utf8')) as Truth
  return {entry, corePath, core, program, truth, sysroot, dir: path.join(FIXTURES, id)}
}

export const addr = (s: string) => Number.parseInt(s, 16)
