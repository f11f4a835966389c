import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {pipeline} from 'node:stream/promises'
import {fileURLToPath} from 'node:url'
import zlib from 'node:zlib'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'

export const FIXTURES = fileURLToPath(new URL('../../fixtures/cores', import.meta.url))

export interface FixtureEntry {
  id: string
  gperftools: string
  config: 'shared' | 'minimal' | 'static' | 'stripped' | 'preload'
  exe: string
  tcmalloc: string | null
  threads: number
  coreBytes: number
}

/** Ground truth the fixture process recorded about itself (fixtures/README.md). */
export interface Truth {
  pid: number
  gperftools: string
  hookMethod: string
  preHookAllocatedBytes: number
  unknownFrees: {count: number; bytes: number | null}
  threads: Array<{tid: number; pthread: string; role: string}>
  counters: Record<string, number>
  live: Array<[string, number]>
  objects: Array<{
    name: string
    address: string
    size: number
    class: string | null
    pointers: Array<{offset: number; to: string; toOffset: number}>
    leaked: boolean
    heldBy: null | {kind: 'stack'; tid: number} | {kind: 'global'; symbol: string}
  }>
  magic: Array<{address: string; value: string; where: string}>
}

export function fixtureIndex(): FixtureEntry[] {
  const file = path.join(FIXTURES, 'index.json')
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as FixtureEntry[]) : []
}

/** Decompresses a fixture's core.br once into the temp folder (keyed by content hash) and returns its path. */
export async function fixtureCorePath(id: string): Promise<string> {
  const br = path.join(FIXTURES, id, 'core.br')
  const hash = crypto.createHash('sha1').update(fs.readFileSync(br)).digest('hex').slice(0, 12)
  const dir = path.join(os.tmpdir(), 'toma-fixtures')
  fs.mkdirSync(dir, {recursive: true})
  const out = path.join(dir, `${id}-${hash}.core`)
  if (!fs.existsSync(out)) {
    const tmp = `${out}.tmp-${process.pid}`
    await pipeline(fs.createReadStream(br), zlib.createBrotliDecompress(), fs.createWriteStream(tmp))
    fs.renameSync(tmp, out)
  }
  return out
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
  const program = Program.load(core, fixtureFlags(entry))
  const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, id, 'truth.json'), 'utf8')) as Truth
  return {entry, corePath, core, program, truth, dir: path.join(FIXTURES, id)}
}

export const addr = (s: string) => Number.parseInt(s, 16)
