import type {Accumulation} from '../dominators/accumulation.js'
import type {RootRegion} from '../graph/root-regions.js'
import type {FileIdentity} from '../elf/file-identity.js'
import type {ProcessIdentity} from '../util/process-identity.js'
/**
 * Everything an analysis depended on: if any of it differs for a query, the index does not answer
 * that query and the core is analysed again.
 */
export interface IndexInputs {
  /**
   * The core file given: its path, size and mtime. For a compressed core these are the compressed
   * file's, and `compressed` says its format and the decompressed copy that was analysed.
   */
  core: {path: string; size: number; mtimeMs: number; compressed?: {format: string; uncompressedPath: string}}
  /** Each module of the core: the file used for it (path and build-id), or null when none was. */
  modules: ModuleInput[]
  /**
   * The options that change the answer, as given to analyze (paths absolute): module flags,
   * --tcmalloc-version, root kinds, … Options left out were not given.
   */
  options: Record<string, string | boolean | number>
}

export interface ModuleInput {
  /** The module's path in the core. */
  module: string
  /** The file used for it, or null when none was found (or it was refused). */
  file: string | null
  /** The file's GNU build-id (null: no file, or the file has none). */
  buildId: string | null
  /**
   * The file's size, mtime and inode when the index was made: a query finds the same file by them
   * and takes its build-id from here instead of reading it (absent in older indexes).
   */
  identity?: FileIdentity | null
}

/** A warning kept in the index for queries to repeat (a module file missing, say). */
export interface StoredWarning {
  phase: string
  kind: string
  message: string
  addresses: string[]
}

/** What the naming tiers did (naming/name-heap.ts), for info and the report. */
export interface NamingMeta {
  /** Objects named, by via label (naming/via.ts). */
  namedBy: Record<string, number>
  notes: string[]
  warnings: Array<{message: string; address: number}>
  conflicts: {count: number; examples: string[]}
}

/**
 * The frame labels sightings share, kept once each in the meta (sighting.frame indexes them). Here,
 * not in sighting-index.ts, which reads the index: the meta's shape depends on no reader of it.
 */
export interface SightingFrame {
  function: string | null
  frame: string
}

/** What later commands need from the index besides its arrays. */
export interface IndexMeta {
  inputs: IndexInputs
  pageSize: number
  /** The analyze report (the analysis layer's HeapSummary); queries read only what is typed here. */
  summary: {allocator: {kind?: string; version: string | null; pageSize: number}} & Record<string, unknown>
  /** Warnings that also hold for every query: module files that were missing or refused. */
  moduleWarnings: StoredWarning[]
  sizeClassSizes: number[]
  threadCaches: Array<{address: number; tid: number | null; cpu?: number | null}>
  /** Type id k (k ≥ 1) in object.type names typeNames[k − 1]. */
  typeNames: string[]
  /** What sort of block each name is ("object" for a C/C++ type; naming/object-names.ts). */
  typeKinds: string[]
  /** The naming pass's counts by tier, findings and conflicts. */
  naming: NamingMeta
  /** The root regions scanned, sorted by start: a root's label is the region holding its address. */
  rootRegions: RootRegion[]
  /** Accumulation points of the objects retaining ≥ 1 % of the live heap (dominators/accumulation.ts). */
  accumulations: Accumulation[]
  /** TCMalloc's sampling period (FLAGS_tcmalloc_sample_parameter), null when not known; samples are in the sample.* arrays. */
  samplePeriod: number | null
  /** The frame labels of the dead-frame sightings (sighting.* arrays; sighting-index.ts). */
  sightingFrames: SightingFrame[]
  /**
   * In a model-stage index written by an analysis that went on to the graph: that process, which
   * a query needing the graph waits for while it runs (util/process-identity.ts). Absent otherwise.
   */
  graphUnderWay?: ProcessIdentity
}

export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const isStr = (v: unknown): v is string => typeof v === 'string'
export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const identityOk = (v: unknown): boolean => v === undefined || v === null || (isObj(v) && isNum(v.size) && isNum(v.mtimeMs) && isNum(v.ino))
const every = (v: unknown, ok: (x: unknown) => boolean) => Array.isArray(v) && v.every(ok)

/** Why a parsed header's meta is not an IndexMeta, or null when its shape is right. */
export function metaProblem(meta: unknown): string | null {
  if (!isObj(meta)) return 'no meta object'
  const inputs = meta.inputs
  if (!isObj(inputs) || !isObj(inputs.core) || !isStr(inputs.core.path) || !isNum(inputs.core.size) || !isNum(inputs.core.mtimeMs)) return 'no core identity'
  if (inputs.core.compressed !== undefined && !(isObj(inputs.core.compressed) && isStr(inputs.core.compressed.format) && isStr(inputs.core.compressed.uncompressedPath))) return 'bad compressed core'
  if (!every(inputs.modules, m => isObj(m) && isStr(m.module) && (m.file === null || isStr(m.file)) && (m.buildId === null || isStr(m.buildId)) && identityOk(m.identity))) return 'bad module list'
  if (!isObj(inputs.options) || !Object.values(inputs.options).every(v => ['string', 'boolean', 'number'].includes(typeof v))) return 'bad options'
  if (!isNum(meta.pageSize) || meta.pageSize <= 0) return 'bad page size'
  if (!isObj(meta.summary) || !isObj(meta.summary.allocator)) return 'no summary'
  if (!every(meta.moduleWarnings, w => isObj(w) && isStr(w.message) && isStr(w.phase) && isStr(w.kind) && every(w.addresses, isStr))) return 'bad warnings'
  if (!every(meta.sizeClassSizes, isNum)) return 'bad size classes'
  if (!every(meta.threadCaches, c => isObj(c) && isNum(c.address) && (c.tid === null || isNum(c.tid)) && (c.cpu === undefined || c.cpu === null || isNum(c.cpu)))) return 'bad thread caches'
  if (!every(meta.typeNames, isStr)) return 'bad type names'
  if (!every(meta.typeKinds, isStr) || (meta.typeKinds as unknown[]).length !== (meta.typeNames as unknown[]).length) return 'bad type kinds'
  if (!isObj(meta.naming) || !isObj(meta.naming.namedBy) || !every(meta.naming.notes, isStr) || !isObj(meta.naming.conflicts)) return 'bad naming record'
  if (!every(meta.accumulations, a => isObj(a) && isNum(a.holder) && isNum(a.point) && isNum(a.depth) && typeof a.cut === 'boolean' && isNum(a.objects) && every(a.groups, g => isObj(g) && isNum(g.type) && isNum(g.size) && isNum(g.objects) && isNum(g.bytes)))) return 'bad accumulation points'
  if (!every(meta.rootRegions, r => isObj(r) && isStr(r.kind) && isNum(r.start) && isNum(r.end) && isNum(r.base) && isStr(r.label) && (r.thread === null || isNum(r.thread)))) return 'bad root regions'
  if (!(meta.samplePeriod === null || (isNum(meta.samplePeriod) && meta.samplePeriod > 0))) return 'bad sample period'
  if (!every(meta.sightingFrames, f => isObj(f) && (f.function === null || isStr(f.function)) && isStr(f.frame))) return 'bad sighting frames'
  if (meta.graphUnderWay !== undefined && !(isObj(meta.graphUnderWay) && Number.isSafeInteger(meta.graphUnderWay.pid) && isNum(meta.graphUnderWay.startTime))) return 'bad analysis process'
  return null
}
