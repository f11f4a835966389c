import * as Args from '../src/cli/args.js'
import * as Flags from '../src/cli/flags.js'
import {diffCores} from '../src/queries/diff.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openDiffPair} from '../src/cli/open-diff-pair.js'
import {analysisFlags, queryRunFlags} from '../src/cli/query-flags.js'
import {diffText} from '../src/report/diff-text.js'

export default class Diff extends TomaCommand {
  static override description = 'What changed between two cores of one process: objects born, died and kept per type, the holders that grew, TCMalloc\'s states, how fragmentation changed per size class'
  static override examples = ['<%= config.bin %> diff core.old core.new', '<%= config.bin %> diff core.old core.new --exe ./server --json']
  static override args = {
    old: Args.string({description: 'the earlier core (or its .toma-index)', required: true, ignoreStdin: true}),
    new: Args.string({description: 'the later core (or its .toma-index) of the same program', required: true, ignoreStdin: true}),
  }
  static override flags = {
    ...analysisFlags,
    ...queryRunFlags,
    limit: Flags.integer({description: 'rows of types and holders to show', default: 20, min: 1, max: 1000}),
  }

  async run() {
    const {args, flags} = await this.parse(Diff)
    const [before, after] = await openDiffPair(args.old, args.new, flags, note)
    const d = diffCores(before, after, {growthLimit: flags.limit})
    if (!this.jsonEnabled()) this.log(diffText(d, flags.limit))
    return d
  }
}
