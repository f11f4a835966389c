import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {writeFileSafely} from '../../src/util/temporary-file.js'
import {buildOnce} from './build-once.js'
import {runToma} from './run-toma.js'
import {testTemp, testTempRoot} from './test-temp.js'

/** What `sharedAnalysis` gives: the index, and what `analyze --json` printed when it made it. */
export interface SharedAnalysis {
  index: string
  /** analyze's --json answer (its crossCheck, threadCaches, ...). */
  analysis: Record<string, unknown>
}

/**
 * The index `toma analyze CORE ARGS --index …` makes, made once in the run, whichever test file
 * asks first, and read by every test that only queries an index: an analysis of a fixture core is
 * 2 to 5 s (a CLI start and the model and graph stages), and several files queried the same core
 * analysed with the same flags, each analysing it again. Tests of analysis itself (stages,
 * workers, memory limit, hostile input) keep making their own.
 *
 * Keyed by the core's path and the arguments, so another option is another index. The index
 * records the core's path, size and mtime: `core` must be the cached fixture core itself (not a
 * copy), which no test changes. Readers must not write to it: a query given an index it has to
 * rebuild would write it, and a test file that wants that makes an index of its own.
 */
export async function sharedAnalysis(core: string, args: string[]): Promise<SharedAnalysis> {
  const key = crypto.createHash('sha1').update([core, ...args].join('\0')).digest('hex').slice(0, 16)
  const dir = path.join(testTempRoot(), 'shared-indexes')
  fs.mkdirSync(dir, {recursive: true})
  const index = path.join(dir, `${path.basename(core)}-${key}.toma-index`)
  const answer = `${index}.analysis.json`
  await buildOnce(index, async tmp => {
    // A folder of its own as the working directory: analyze --index writes nothing in it, and it goes.
    const cwd = testTemp('toma-shared-analysis-')
    try {
      const r = await runToma(['analyze', core, ...args, '--index', tmp, '--json'], {cwd})
      if (r.status !== 0) throw new Error(`toma analyze ${[core, ...args].join(' ')} exited ${r.status}: ${r.stderr}`)
      JSON.parse(r.stdout)
      // The answer is in place before the index is: whoever finds the index finds its answer.
      writeFileSafely(answer, r.stdout)
    } finally {
      fs.rmSync(cwd, {recursive: true, force: true})
    }
  })
  return {index, analysis: JSON.parse(fs.readFileSync(answer, 'utf8')) as Record<string, unknown>}
}
