import fs from 'node:fs'
import {analyzeCore, type AnalyzeOptions, type IndexMeta} from '../analysis/analyze-core.js'
import {TomaError} from '../errors.js'
import {HeapIndex} from '../index/heap-index.js'
import {INDEX_MAGIC, IndexFile} from '../index/index-file.js'
import {openProgram} from './open-program.js'
import {terminalProgress} from './progress.js'
import type {Program} from '../program/program.js'
import {defaultIndexPath, isStale, lastAnalysis, rememberLast} from '../index/index-location.js'

export interface OpenedIndex {
  index: HeapIndex
  corePath: string
  indexPath: string
  /** The core with its module files, found as the analysis found them unless flags say otherwise. */
  program(): Program
}

/**
 * The index for a query: of the core given (analysed now if it has no index, or a stale one), of
 * an index file given directly, or of the latest analysis made in this folder.
 */
export function openIndex(coreArg: string | undefined, flags: AnalyzeOptions, note: (line: string) => void): OpenedIndex {
  let corePath: string
  let indexPath: string
  if (coreArg === undefined) {
    const last = lastAnalysis()
    corePath = last.core
    indexPath = last.index
    note(`using the analysis of ${corePath} (index ${indexPath})`)
  } else if (isIndexFile(coreArg)) {
    indexPath = coreArg
    const file = IndexFile.open(indexPath)
    if (!file) throw new TomaError(`${indexPath}: made by another version of toma; run toma analyze on its core again`)
    corePath = (file.meta as IndexMeta).identity.path
    file.close()
  } else {
    corePath = coreArg
    indexPath = flags.index ?? defaultIndexPath(corePath)
  }
  if (!fs.existsSync(corePath)) throw new TomaError(`${corePath}: no such file (the core this index was made from)`)
  let file = fs.existsSync(indexPath) ? IndexFile.open(indexPath) : null
  const meta = file?.meta as IndexMeta | undefined
  if (file && meta && isStale(meta.identity, corePath)) {
    file.close()
    file = null
    note(`index ${indexPath} is stale (the core changed); analysing ${corePath} again`)
  } else if (!file) {
    note(`no current index for ${corePath}; analysing it first`)
  }
  if (!file) {
    const progress = terminalProgress()
    try {
      analyzeCore(corePath, {...(meta?.options ?? {}), ...definedOnly(flags), index: indexPath}, progress.update)
    } finally {
      progress.done()
    }
    file = IndexFile.open(indexPath)
    if (!file) throw new TomaError(`${indexPath}: could not read back the index just written`)
  }
  rememberLast(corePath, indexPath)
  const index = new HeapIndex(file)
  return {index, corePath, indexPath, program: () => openProgram(corePath, {...index.meta.options, ...definedOnly(flags)})}
}

/** Flags the user gave (oclif leaves the others undefined), to lay over stored options. */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}

/** An index given where a core is expected: known by its magic, whatever its name. */
function isIndexFile(file: string): boolean {
  try {
    const fd = fs.openSync(file, 'r')
    const magic = Buffer.alloc(8)
    fs.readSync(fd, magic, 0, 8, 0)
    fs.closeSync(fd)
    return magic.toString('latin1') === INDEX_MAGIC
  } catch {
    return false
  }
}
