import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, expect} from 'vitest'
import {analyzeCore, type RunOptions} from '../../src/pipeline/analyze-core.js'
import {Core} from '../../src/core/core.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {LIVE} from '../../src/heap/states.js'
import {brotliCorePath, sysrootOf} from '../helpers/fixture-core.js'
import {buildOnce} from '../helpers/build-once.js'
import {sharedAnalysis} from '../helpers/shared-analysis.js'
import {testTemp, testTempRoot} from '../helpers/test-temp.js'

/**
 * fixtures/namesdemo (fixtures/namesdemo/README.md): a core of programs/namesdemo.cpp and the
 * truth the process recorded about its own blocks (address, request, kind, name) before it.
 */
export const DIR = fileURLToPath(new URL('../../fixtures/namesdemo', import.meta.url))
/** The same program built with clang++ -stdlib=libc++, stripped (fixtures/namesdemo-libcxx). */
export const LIBCXX_DIR = fileURLToPath(new URL('../../fixtures/namesdemo-libcxx', import.meta.url))
const TCMALLOC = fileURLToPath(new URL('../../fixtures/demo/libtcmalloc.so.4', import.meta.url))

export interface TruthBlock {
  address: string
  request: number
  kind: string
  name: string
  container: string
}

export interface NamesTruth {
  poolStride: number
  poolSlots: number
  poolObjects: number
  blocks: TruthBlock[]
}

const readTruth = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'truth.json'), 'utf8')) as NamesTruth
export const truth = readTruth(DIR)
export const libcxxTruth = readTruth(LIBCXX_DIR)

export interface Analysed {
  work: string
  index: HeapIndex
}

/** Which build: libstdc++ stripped (no debug file), libstdc++ with -g, or libc++ stripped. */
export type Build = 'stripped' | 'symbols' | 'libcxx'

/** The core and the module files of one build; the stripped executable is copied into `exeDir`. */
async function namesdemoFiles(build: Build, exeDir: string): Promise<{corePath: string; exePath: string; sysroot?: string}> {
  const dir = build === 'libcxx' ? LIBCXX_DIR : DIR
  let exePath = path.join(dir, 'namesdemo')
  if (build === 'stripped') {
    exePath = path.join(exeDir, 'namesdemo.stripped')
    await buildOnce(exePath, tmp => fs.copyFileSync(path.join(DIR, 'namesdemo.stripped'), tmp, fs.constants.COPYFILE_EXCL))
  }
  const corePath = await brotliCorePath(path.join(dir, 'core.br'))
  // libc++'s own symbols name what leads to the pool and the shared_ptr's pointee: the build that
  // ran (Debian bookworm's libc++1 of clang 14) is carried in fixtures/sysroots, by build-id.
  const sysroot = build === 'libcxx' ? await carriedLibraries(path.join(dir, 'core.br'), corePath) : undefined
  return {corePath, exePath, ...(sysroot ? {sysroot} : {})}
}

/**
 * Analyzes the core with the stripped executable alone (copied into a folder of its own, so that
 * its .gnu_debuglink finds no debug file: no DWARF, no .symtab), with the -g build (DWARF and
 * .symtab), or the libc++ build's core. The caller closes the index and removes `work`.
 */
export async function analyzeNamesdemo(build: Build, run?: RunOptions): Promise<Analysed> {
  const work = testTemp('toma-names-')
  const indexPath = path.join(work, 'core.toma-index')
  const {corePath, exePath, sysroot} = await namesdemoFiles(build, work)
  analyzeCore(corePath, {exe: exePath, tcmalloc: TCMALLOC, ...(sysroot ? {sysroot} : {})}, undefined, indexPath, undefined, run)
  return {work, index: HeapIndex.open(indexPath)!}
}

async function carriedLibraries(br: string, corePath: string): Promise<string> {
  const core = Core.open(corePath)
  try {
    const sysroot = await sysrootOf(br, core)
    if (!sysroot) throw new Error(`${br}: none of its libraries is carried in fixtures/sysroots`)
    return sysroot
  } finally {
    core.close()
  }
}

/**
 * The index of one build's analysis for the calling describe block: the run's one analysis of it
 * (helpers/shared-analysis.ts), which the naming tests only query. The stripped executable's copy
 * sits alone in a folder of the run's, so that its debuglink finds no debug file.
 */
export function useNamesdemo(build: Build): () => HeapIndex {
  let index: HeapIndex | undefined
  beforeAll(async () => {
    const exeDir = path.join(testTempRoot(), 'shared-files', `namesdemo-${build}`)
    fs.mkdirSync(exeDir, {recursive: true})
    const {corePath, exePath, sysroot} = await namesdemoFiles(build, exeDir)
    const shared = await sharedAnalysis(corePath, ['--exe', exePath, '--tcmalloc', TCMALLOC, ...(sysroot ? ['--sysroot', sysroot] : [])])
    index = HeapIndex.open(shared.index)!
  })
  afterAll(() => index?.file.close())
  return () => index!
}

/** The kinds the std-layout tier names (all of them are in both fixtures' truth). */
export const LAYOUT_KINDS = [
  'std::string buffer', 'std::vector body', 'std::map/set node', 'std::unordered buckets', 'std::unordered node',
  'std::deque map', 'std::deque block', 'std::list node',
]

/** The names a tier gives when the element type is not known (helper-common's vocabulary). */
const GENERIC = new Set([
  'std::string buffer', 'std::vector body', 'std::map/set node', 'std::unordered buckets', 'std::unordered node',
  'std::deque map', 'std::deque block', 'std::list node', 'C string',
])

const addr = (s: string) => Number(BigInt(s))

/** The names a block of the truth may carry: its own, or its kind's generic name. */
const accepted = (b: TruthBlock) => (GENERIC.has(b.kind) ? [b.name, b.kind] : [b.name])

/**
 * One spelling of a type for comparison: the process writes `std::string`, DWARF and the
 * demangler the class it stands for (`std::__cxx11::basic_string<char, std::char_traits<char>,
 * std::allocator<char> >`), and closing brackets come as `> >` or `>>`.
 */
export const spelling = (name: string | null) => name?.replaceAll('std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >', 'std::string').replaceAll('> >', '>>') ?? null
export const acceptedSpellings = (b: TruthBlock) => accepted(b).map(spelling)

/**
 * Recall and precision of one tier (or of tiers that run together): every block the truth lists
 * with one of `kinds` is a live slot starting there, named by `via` (one of them), with the truth's name or the kind's generic name (a kind without
 * a generic name: the truth's name only); and every slot `via` named is a block the truth lists
 * (of any kind), with such a name. Returns the counts per kind.
 */
export function expectTier(index: HeapIndex, kinds: string[], via: string | string[], t: Pick<NamesTruth, 'blocks'> = truth): Record<string, number> {
  const vias: string[] = typeof via === 'string' ? [via] : via
  const counts: Record<string, number> = {}
  for (const b of t.blocks.filter(k => kinds.includes(k.kind))) {
    const o = index.objectAt(addr(b.address))
    expect(o?.start, `${b.kind} ${b.address} (${b.container}) starts a slot`).toBe(addr(b.address))
    expect(index.state(o!.index)).toBe('live')
    expect(b.request).toBeLessThanOrEqual(o!.size)
    const name = index.type(o!.index)
    expect(acceptedSpellings(b), `${b.kind} ${b.address} (${b.container}) is named ${name}`).toContain(spelling(name))
    expect(vias, `${b.address} (${b.container})`).toContain(index.via(o!.index))
    counts[b.kind] = (counts[b.kind] ?? 0) + 1
  }
  const byAddress = new Map(t.blocks.map(b => [addr(b.address), b]))
  index.objects.forEachObject((id, start) => {
    if (!vias.includes(index.via(id))) return
    const b = byAddress.get(start)
    const at = `${index.type(id)} at 0x${start.toString(16)}, named by ${index.via(id)}`
    expect(b, `${at} is a block the truth lists`).toBeDefined()
    expect(acceptedSpellings(b!), at).toContain(spelling(index.type(id)))
  }, LIVE)
  return counts
}

/** The plain struct shared_ptr(new T) owns (g_owned) is named app::Point by the layout tier. */
export function expectSharedPointee(index: HeapIndex, t: NamesTruth): void {
  const owned = t.blocks.filter(b => b.container === 'g_owned' && !b.name.startsWith('std::'))
  expect(owned.map(b => b.name)).toEqual(['app::Point'])
  const o = index.objectAt(addr(owned[0]!.address))!
  expect(index.type(o.index)).toBe('app::Point')
  expect(index.via(o.index)).toBe('layout')
}

/** Bytes of live slots, and of those some tier named. */
export function namedShare(index: HeapIndex): {live: number; named: number} {
  let live = 0
  let named = 0
  index.objects.forEachObject((id, _start, size) => {
    live += size
    if (index.type(id) !== null) named += size
  }, LIVE)
  return {live, named}
}
