import {Args, Flags} from '@oclif/core'
import {analyzeCore} from '../src/analysis/analyze-core.js'
import {TomaCommand, moduleFlags} from '../src/cli/base-command.js'
import {terminalProgress} from '../src/cli/progress.js'
import {analyzeText} from '../src/report/analyze.js'
import {ROOT_OPTION_NAMES} from '../src/graph/root-kinds.js'

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
    roots: Flags.string({
      description: `root kinds to scan, comma-separated (default: all): ${ROOT_OPTION_NAMES.join(',')}; e.g. registers,stacks,globals for the strict view`,
    }),
  }

  async run() {
    const {args, flags} = await this.parse(Analyze)
    const progress = terminalProgress(!this.jsonEnabled() && process.stderr.isTTY === true)
    try {
      const analysis = analyzeCore(args.core, flags, progress.update)
      progress.done()
      if (!this.jsonEnabled()) this.log(analyzeText(analysis.summary, analysis.indexPath))
      return {...analysis.summary, index: analysis.indexPath}
    } finally {
      progress.done()
    }
  }
}
