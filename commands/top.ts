import * as Flags from '../src/cli/flags.js'
import {topObjects, topTypes} from '../src/queries/top.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {RetentionIndex} from '../src/index/retention-index.js'
import {topObjectsText, topTypesText} from '../src/report/held-memory-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Top extends TomaCommand {
  static override description = 'The objects (or types) that retain the most memory: what would be freed without them'
  static override examples = ['<%= config.bin %> top', '<%= config.bin %> top --by type --limit 30']
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    by: Flags.string({description: 'rank single objects, or types (each byte counted once)', options: ['object', 'type'], default: 'object'}),
    limit: Flags.integer({description: 'rows to show (0: all)', default: 20, min: 0}),
  }

  async run() {
    const {args, flags} = await this.parse(Top)
    const {index, corePath} = await openIndex(args.core, flags, note)
    const retention = new RetentionIndex(index)
    if (flags.by === 'type') {
      const t = topTypes(index, retention, flags.limit)
      if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${topTypesText(t)}`)
      return {core: corePath, ...t}
    }
    const t = topObjects(index, retention, flags.limit)
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${topObjectsText(t)}`)
    return {core: corePath, ...t}
  }
}
