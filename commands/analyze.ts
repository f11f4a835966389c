import {Args, Flags} from '@oclif/core'
import {analyzeCore} from '../src/analysis/analyze-core.js'
import {TomaCommand, moduleFlags} from '../src/cli/base-command.js'
import {EXIT_STRICT_WARNINGS} from '../src/cli/exit-codes.js'
import {terminalProgress} from '../src/cli/progress.js'
import {analyzeText} from '../src/report/analyze.js'

export default class Analyze extends TomaCommand {
  static override description = 'Classify every TCMalloc heap object of a core and write the index later commands use'
  static override examples = [
    '<%= config.bin %> analyze core.1234 --tcmalloc libtcmalloc.so.4',
    '<%= config.bin %> analyze core.1234 --exe ./server --sysroot /srv/rootfs --json',
  ]
  static override args = {core: Args.string({description: 'the core file', required: true})}
  static override flags = {
    ...moduleFlags,
    'tcmalloc-version': Flags.string({description: 'gperftools version to assume (e.g. 2.10), instead of detecting it'}),
    index: Flags.string({description: 'where to write the index (default: beside the core, or the cache folder)'}),
    strict: Flags.boolean({description: `exit with code ${EXIT_STRICT_WARNINGS} when there is any warning or unequal cross-check figure`}),
  }

  async run() {
    const {args, flags} = await this.parse(Analyze)
    const progress = terminalProgress(!this.jsonEnabled() && process.stderr.isTTY === true)
    try {
      const {strict, ...options} = flags
      const analysis = analyzeCore(args.core, options, progress.update)
      progress.done()
      if (!this.jsonEnabled()) this.log(analyzeText(analysis.summary, analysis.indexPath))
      if (strict && !analysis.summary.warnings.consistent) process.exitCode = EXIT_STRICT_WARNINGS
      return {...analysis.summary, index: analysis.indexPath}
    } finally {
      progress.done()
    }
  }
}
