import fs from 'node:fs'
import {openRegularFile} from '../util/regular-file.js'
import path from 'node:path'
import {analysisInputs, knownModuleFiles, type AnalysisOptions} from '../pipeline/analysis-inputs.js'
import {TomaError} from '../errors.js'
import {HeapIndex} from '../index/heap-index.js'
import {DamagedIndexError, INDEX_MAGIC} from '../index/index-file.js'
import {inputChange} from '../index/input-changes.js'
import {defaultIndexPath, lastAnalysis} from '../util/index-location.js'
import {openProgram} from '../program/open-program.js'
import {activeSession} from './index-session.js'
import type {OpenedIndex} from './opened-index.js'
import {analysisFlags} from './query-flags.js'
import {limitPassed, runFlagValues} from './run-flags.js'
import {resetPeakMemory} from '../util/peak-memory.js'
import {collectGarbage} from '../store/collect-garbage.js'
import {memoryLimitLine} from '../store/memory-limit.js'
import type {Stage} from '../index/schema.js'
import {isRunning, type ProcessIdentity} from '../util/process-identity.js'
import {hasTemporaryOf} from '../util/temporary-file.js'

/**
 * The index for a query: of the core given, of an index file given directly, or of the latest
 * analysis made in this folder. It answers only when everything it was made from is what the
 * query would use now (the core, the analysis options given or stored, each module file and its
 * build-id) and it holds the stage the query `needs` (schema.ts STAGES); otherwise, or when it is
 * missing, damaged or of another format, the core is analysed again, up to that stage, and one
 * line says why. A query that needs the graph of an index whose graph another toma is building
 * waits for it. A query never changes which core is "the latest analysis".
 */
export async function openIndex(coreArg: string | undefined, flags: Record<string, unknown>, note: (line: string) => void, needs: Stage = 'graph'): Promise<OpenedIndex> {
  const session = activeSession()
  if (!session) return openIndexNow(coreArg, flags, note, needs)
  const core = coreArg ?? session.defaultCore
  // A shell keeps one index per core: the whole one (its commands need the graph sooner or later).
  return session.remember(sessionKey(core, flags), note, () => openIndexNow(core, flags, note, 'graph'))
}

/** What makes two queries of a shell ask for the same index: the core, the analysis options given, --index. */
export function sessionKey(core: string | undefined, flags: Record<string, unknown>): string {
  return JSON.stringify([core === undefined ? null : path.resolve(core), givenAnalysisOptions(flags), flags.index ?? null])
}

async function openIndexNow(coreArg: string | undefined, flags: Record<string, unknown>, note: (line: string) => void, needs: Stage): Promise<OpenedIndex> {
  const given = givenAnalysisOptions(flags)
  // A bad size is the answer even where an index would have answered.
  const run = runFlagValues(flags)
  let corePath: string
  let indexPath: string
  const indexFlag = typeof flags.index === 'string' ? flags.index : undefined
  if (coreArg === undefined && indexFlag === undefined) {
    const last = lastAnalysis()
    corePath = last.core
    indexPath = last.index
    note(`using the analysis of ${corePath} (index ${indexPath})`)
  } else if (coreArg === undefined || isIndexFile(coreArg)) {
    indexPath = coreArg ?? indexFlag!
    // Given directly, a damaged index cannot say which core to analyse: its error is the answer.
    const index = HeapIndex.open(indexPath)
    if (!index) throw new TomaError(`${indexPath}: made by another version of toma; run toma analyze on its core again`)
    corePath = index.meta.inputs.core.path
    index.close()
  } else {
    corePath = coreArg
    indexPath = indexFlag ?? defaultIndexPath(corePath)
  }
  if (!fs.existsSync(corePath)) throw new TomaError(`${corePath}: no such file (the core this index was made from)`)

  let index: HeapIndex | null = null
  let why = `no index for ${corePath} yet; analysing it first`
  if (fs.existsSync(indexPath)) {
    try {
      index = HeapIndex.open(indexPath)
      if (!index) why = `index ${indexPath} was made by another version of toma; analysing again`
    } catch (e) {
      if (!(e instanceof DamagedIndexError)) throw e
      why = `index ${indexPath} is damaged (${e.problem}); analysing again`
    }
  }
  const options: AnalysisOptions = {...(index?.meta.inputs.options ?? {}), ...given}
  const program = openProgram(corePath, options, index ? knownModuleFiles(index.meta.inputs) : undefined)
  for (const line of program.compressed?.notes ?? []) note(line)
  const inputs = analysisInputs(program, options)
  if (index) {
    const change = inputChange(index.meta.inputs, inputs)
    if (change) {
      index.close()
      index = null
      why = change
    }
  }
  if (index && !index.holds(needs)) {
    const underWay = index.meta.graphUnderWay
    index.close()
    index = underWay && building(indexPath, underWay) ? await awaitGraph(indexPath, underWay, note) : null
    if (index && (!index.holds(needs) || inputChange(index.meta.inputs, inputs))) {
      index.close()
      index = null
    }
    why = `index ${indexPath} holds the heap model only; building the object graph`
  }
  if (!index) {
    note(why)
    // Imported only here: the analysis is most of toma's code, and a query answered from its index needs none of it.
    const [{analyzeCore}, {terminalProgress, progressWanted}, {abandonedWithoutParent}] = await Promise.all([import('../pipeline/analyze-core.js'), import('../util/terminal-progress.js'), import('./malloc-tuning.js')])
    if (progressWanted()) note(memoryLimitLine(run.memoryLimit))
    const progress = terminalProgress()
    try {
      // The peak reported is this analysis's, not an earlier command's in the same shell.
      resetPeakMemory()
      // Where this is the second process of a tuned run (launch.ts), it stops once the first one is gone.
      analyzeCore(corePath, options, abandonedWithoutParent(progress.update), indexPath, program, {stage: needs, workers: run.workers, memoryLimit: run.memoryLimit})
    } finally {
      progress.done()
    }
    const passed = limitPassed(run.memoryLimit)
    if (passed) note(passed)
    // The analysis's arrays (hundreds of MB, garbage once it returns) go before the query reads the
    // index: V8 would free them only at a later collection, with the query's own arrays resident.
    collectGarbage()
    index = HeapIndex.open(indexPath)
    if (!index) throw new TomaError(`${indexPath}: could not read back the index just written`)
  }
  for (const w of index.meta.moduleWarnings) note(`warning: ${w.message}`)
  // Edge offsets are found again in the core's bytes (index/edge-offsets.ts).
  index.useCore(program.core.memory, corePath)
  return {index, corePath, indexPath, program: () => program}
}

/** How often a query waiting for another process's graph looks at the index. */
const WAIT_POLL_MS = 250

/**
 * Waits while `analysis` (another toma, which wrote the model-stage index at `indexPath`) builds
 * the graph, showing how long on a terminal; then the index it left: the whole one, or null when
 * it ended without one (stopped, failed) or the index cannot be read.
 */
async function awaitGraph(indexPath: string, analysis: ProcessIdentity, note: (line: string) => void): Promise<HeapIndex | null> {
  const identity = () => {
    try {
      const st = fs.statSync(indexPath)
      return `${st.ino}:${st.mtimeMs}:${st.size}`
    } catch {
      return null
    }
  }
  const before = identity()
  note(`process ${analysis.pid} is building the object graph of this core; waiting for it`)
  const {terminalProgress} = await import('../util/terminal-progress.js')
  const progress = terminalProgress()
  try {
    for (;;) {
      progress.update(`waiting for process ${analysis.pid} (graph stage)`, 0, 1)
      const now = identity()
      // The index is renamed into place whole: a new file there is the finished analysis. Once
      // the process has ended, what it left is read too (the caller checks which stages it holds).
      if ((now !== null && now !== before) || !building(indexPath, analysis)) return openQuietly(indexPath)
      await new Promise(resolve => setTimeout(resolve, WAIT_POLL_MS))
    }
  } finally {
    progress.done()
  }
}

/**
 * Whether `analysis` is still writing the index at `indexPath`: running (the same process) and
 * holding its temporary there. An index names the process itself, so one made by hand cannot make
 * a query wait on any long-running process: that process must also be writing beside it.
 */
function building(indexPath: string, analysis: ProcessIdentity): boolean {
  return isRunning(analysis) && hasTemporaryOf(indexPath, analysis.pid)
}

/** The index at `path`, or null when it is not one this toma reads (the caller analyses again). */
function openQuietly(path: string): HeapIndex | null {
  try {
    return HeapIndex.open(path)
  } catch (e) {
    if (e instanceof DamagedIndexError) return null
    throw e
  }
}

/** The analysis options among a query's flags that the user gave (oclif leaves the others undefined). */
function givenAnalysisOptions(flags: Record<string, unknown>): AnalysisOptions {
  return Object.fromEntries(Object.keys(analysisFlags).filter(k => flags[k] !== undefined).map(k => [k, flags[k]])) as AnalysisOptions
}

/** An index given where a core is expected: known by its magic, whatever its name. */
export function isIndexFile(file: string): boolean {
  try {
    const fd = openRegularFile(file)
    const magic = Buffer.alloc(8)
    fs.readSync(fd, magic, 0, 8, 0)
    fs.closeSync(fd)
    return magic.toString('latin1') === INDEX_MAGIC
  } catch {
    return false
  }
}
