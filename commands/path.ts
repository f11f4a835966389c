import * as Flags from '../src/cli/flags.js'
import {pathsTo} from '../src/queries/paths.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {parseAddress} from '../src/core/parse-address.js'
import {addressArgs, indexFlags} from '../src/cli/query-flags.js'
import {TomaError} from '../src/errors.js'
import {RetentionIndex} from '../src/index/retention-index.js'
import {pathsText} from '../src/report/held-memory-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Path extends TomaCommand {
  static override description = 'The shortest chain of pointers from a root (register, stack slot, global) to the object holding an address'
  static override examples = ['<%= config.bin %> path 0x55d0c0a01040', '<%= config.bin %> path 0x55d0c0a01040 core.1234 --roots 5']
  static override args = addressArgs
  static override flags = {
    ...indexFlags,
    roots: Flags.integer({description: 'up to this many shortest paths, each from a different root', default: 1, min: 1, max: 100}),
    all: Flags.boolean({description: 'up to 100 shortest paths, each from a different root', exclusive: ['roots']}),
  }

  async run() {
    const {args, flags} = await this.parse(Path)
    const address = parseAddress(args.address)
    const {index, program, corePath} = await openIndex(args.core, flags, note)
    const paths = pathsTo(program(), index, new RetentionIndex(index), address, {paths: flags.all ? 100 : flags.roots})
    if (!paths) throw new TomaError(`${args.address} is not inside any heap object`)
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${pathsText(paths)}`)
    return {core: corePath, ...paths}
  }
}
