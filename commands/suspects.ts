import * as Flags from '../src/cli/flags.js'
import {suspectsOf} from '../src/queries/suspects.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {RetentionIndex} from '../src/index/retention-index.js'
import {suspectsText} from '../src/report/held-memory-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Suspects extends TomaCommand {
  static override description = 'Leak suspects: objects, types and leaked structures that retain more than a share of the live heap, with their paths and accumulation points'
  static override examples = ['<%= config.bin %> suspects', '<%= config.bin %> suspects --threshold 5']
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    threshold: Flags.integer({description: 'percent of the live heap a suspect must retain', default: 10, min: 1, max: 100}),
  }

  async run() {
    const {args, flags} = await this.parse(Suspects)
    const {index, program, corePath} = await openIndex(args.core, flags, note)
    const suspects = suspectsOf(program(), index, new RetentionIndex(index), flags.threshold / 100)
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${suspectsText(suspects)}`)
    return {core: corePath, ...suspects}
  }
}
