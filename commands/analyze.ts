import * as Flags from '../src/cli/flags.js'
import {analyzeCore, type MemoryFacts} from '../src/pipeline/analyze-core.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {EXIT_STRICT_WARNINGS} from '../src/cli/exit-codes.js'
import {progressWanted, terminalProgress} from '../src/util/terminal-progress.js'
import {analysisFlags, requiredCoreArg} from '../src/cli/query-flags.js'
import {abandonedWithoutParent, mallocTunablesInEffect} from '../src/cli/malloc-tuning.js'
import {defaultIndexPath, rememberLast} from '../src/util/index-location.js'
import {INDEX_MAGIC} from '../src/index/index-file.js'
import {openProgram} from '../src/program/open-program.js'
import {programInputs, refuseOverwrite} from '../src/cli/output-file.js'
import {analyzeText} from '../src/report/analyze.js'
import {ROOT_OPTION_NAMES} from '../src/graph/root-kinds.js'
import type {Stage} from '../src/index/schema.js'
import {printable} from '../src/util/printable.js'
import {memoryLimitLine, type MemoryLimit} from '../src/store/memory-limit.js'
import {limitPassed, runFlagValues, runFlags} from '../src/cli/run-flags.js'
import {resetPeakMemory} from '../src/util/peak-memory.js'

export default class Analyze extends TomaCommand {
  static override description = 'Classify every TCMalloc heap object of a core and write the index later commands use'
  static override examples = [
    '<%= config.bin %> analyze core.1234 --tcmalloc libtcmalloc.so.4',
    '<%= config.bin %> analyze core.1234 --exe ./server --sysroot /srv/rootfs --json',
  ]
  static override args = {core: requiredCoreArg('the core file')}
  static override flags = {
    ...analysisFlags,
    index: Flags.string({description: 'where to write the index (default: beside the core, or the cache folder)'}),
    force: Flags.boolean({description: 'replace an existing file at the index path that is not a toma index'}),
    strict: Flags.boolean({description: `exit with code ${EXIT_STRICT_WARNINGS} when there is any warning or unequal cross-check figure`}),
    ...runFlags(),
    stage: Flags.string({
      options: ['model', 'graph'],
      default: 'graph',
      description: 'the last stage to run: model (the heap model, states, sizes, types by vtable: no pointer scan) or graph (everything); the model\'s index is written first either way',
    }),
    roots: Flags.string({
      description: `root kinds to scan, comma-separated (default: all): ${ROOT_OPTION_NAMES.join(',')}; e.g. registers,stacks,globals for the strict view`,
    }),
  }

  async run() {
    const {args, flags} = await this.parse(Analyze)
    const progress = terminalProgress(!this.jsonEnabled() && progressWanted())
    try {
      // Every other flag is an analysis option (the index records it).
      const {strict, index, workers: _workers, stage, force, 'memory-limit': _limit, quiet: _quiet, json: _json, ...options} = flags as typeof flags & {json?: boolean}
      const {workers, memoryLimit} = runFlagValues(flags)
      if (progressWanted() && !this.jsonEnabled()) note(memoryLimitLine(memoryLimit))
      const program = openProgram(args.core, options)
      const indexPath = index ?? defaultIndexPath(args.core)
      refuseOverwrite(indexPath, {kind: 'toma index', ownKind: head => head.toString('latin1', 0, 8) === INDEX_MAGIC, inputs: programInputs(program), force})
      // The peak reported is this analysis's, not an earlier command's in the same shell.
      resetPeakMemory()
      // In the second process of a tuned run (bin/run.js), the analysis stops if the first one is gone.
      const analysis = analyzeCore(args.core, options, abandonedWithoutParent(progress.update), indexPath, program, {
        workers,
        memoryLimit,
        stage: stage as Stage,
        // On a terminal, where another one may be waiting for an answer: the first answers are there now.
        modelWritten: stage === 'graph' && progressWanted() && !this.jsonEnabled() ? () => {
              progress.done()
              note(`heap model written to ${printable(indexPath)}: classes, find-object and check --max-live-bytes answer from it now; building the object graph`)
            }
          : undefined,
      })
      // Only analyze sets the default core; with --index it does not create ./.toma/ for it.
      rememberLast(args.core, analysis.indexPath, {create: index === undefined})
      progress.done()
      for (const line of analysis.program.compressed?.notes ?? []) note(line)
      const passed = limitPassed(analysis.memory)
      if (passed) note(passed)
      if (!this.jsonEnabled()) this.log(analyzeText(analysis.summary, analysis.indexPath))
      if (strict && !analysis.summary.warnings.consistent) process.exitCode = EXIT_STRICT_WARNINGS
      return {...analysis.summary, index: analysis.indexPath, stages: analysis.stages, threads: analysis.threadsUsed, scanThreads: analysis.scanThreads, reverseThreads: analysis.reverseThreads, namingOnWorker: analysis.namingOnWorker, dominatorsOnWorker: analysis.dominatorsOnWorker, memory: memoryFacts(analysis.memory), mallocTunables: mallocTunablesInEffect()}
    } finally {
      progress.done()
    }
  }
}

/** The memory limit, what the run held at most (the kernel's peak resident set: the limit bounds it), and what it kept in the index instead. */
function memoryFacts(m: MemoryLimit & MemoryFacts) {
  return {limitBytes: m.bytes, limitFrom: m.from, availableBytes: m.available, peakBytes: process.resourceUsage().maxRSS * 1024, reversePasses: m.reversePasses, forwardEdgesInIndex: m.forwardInFile, scanRangesSpilled: m.scanRangesSpilled, scanTargetsInIndex: m.scanTargetsInIndex, dominatorParentParked: m.dominatorParentParked, typeIdsParked: m.typeIdsParked}
}
