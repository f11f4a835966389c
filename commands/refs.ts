import * as Flags from '../src/cli/flags.js'
import {refsOf} from '../src/queries/refs.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {parseAddress} from '../src/core/parse-address.js'
import {addressArgs, indexFlags} from '../src/cli/query-flags.js'
import {TomaError} from '../src/errors.js'
import {refsText} from '../src/report/refs-text.js'

export default class Refs extends TomaCommand {
  static override description = 'Who points to the object at an address (objects and roots), and what it points to'
  static override examples = ['<%= config.bin %> refs 0x55d0c0a01040', '<%= config.bin %> refs 0x55d0c0a01040 core.1234 --in --depth 3']
  static override args = addressArgs
  static override flags = {
    ...indexFlags,
    in: Flags.boolean({description: 'only what points to it', exclusive: ['out']}),
    out: Flags.boolean({description: 'only what it points to', exclusive: ['in']}),
    depth: Flags.integer({description: 'follow incoming edges breadth-first this many levels', default: 1, min: 1, max: 64}),
    limit: Flags.integer({description: 'list at most this many edges per object and direction (and roots); the counts are always whole', default: 100, min: 1}),
  }

  async run() {
    const {args, flags} = await this.parse(Refs)
    const address = parseAddress(args.address)
    const {index, corePath, program: openProgramOfIndex} = await openIndex(args.core, flags, note)
    const program = openProgramOfIndex()
    const options = {incoming: !flags.out, outgoing: !flags.in, depth: flags.depth, limit: flags.limit}
    const refs = refsOf(program, index, address, options)
    if (!refs) throw new TomaError(`${args.address} is not inside any heap object`)
    if (!this.jsonEnabled()) this.log(refsText(refs, corePath, options))
    return {core: corePath, ...refs}
  }
}
