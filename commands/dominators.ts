import * as Flags from '../src/cli/flags.js'
import {dominatedBy} from '../src/queries/dominated.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {parseAddress} from '../src/core/parse-address.js'
import {addressArgs, indexFlags} from '../src/cli/query-flags.js'
import {TomaError} from '../src/errors.js'
import {RetentionIndex} from '../src/index/retention-index.js'
import {dominatedText} from '../src/report/held-memory-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Dominators extends TomaCommand {
  static override description = 'What the object at an address keeps alive: its dominator subtree, largest retained first'
  static override examples = ['<%= config.bin %> dominators 0x55d0c0a01040 --depth 3']
  static override args = addressArgs
  static override flags = {
    ...indexFlags,
    depth: Flags.integer({description: 'levels of the dominator tree to show below the object', default: 2, min: 0, max: 64}),
    limit: Flags.integer({description: 'children shown per object, largest retained first', default: 10, min: 1, max: 10_000}),
  }

  async run() {
    const {args, flags} = await this.parse(Dominators)
    const address = parseAddress(args.address)
    const {index, corePath} = await openIndex(args.core, flags, note)
    const tree = dominatedBy(index, new RetentionIndex(index), address, {depth: flags.depth, limit: flags.limit})
    if (!tree) throw new TomaError(`${args.address} is not inside any heap object`)
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${dominatedText(tree)}`)
    return {core: corePath, ...tree}
  }
}
