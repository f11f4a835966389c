import * as Flags from '../src/cli/flags.js'
import {DUMP_BYTES, MAX_DUMP_BYTES, MIN_DUMP_BYTES, objectInfo} from '../src/queries/object-info.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {parseAddress} from '../src/core/parse-address.js'
import {addressArgs, indexFlags} from '../src/cli/query-flags.js'
import {findObjectText} from '../src/report/find-object.js'

export default class FindObject extends TomaCommand {
  static override description = 'Which heap object holds an address: its id, start, size, state, type, and its bytes around the address with the words that point somewhere named'
  static override examples = ['<%= config.bin %> find-object 0x55d0c0a01048', '<%= config.bin %> find-object 0x55d0c0a01048 core.1234 --strings']
  static override args = addressArgs
  static override flags = {
    ...indexFlags,
    strings: Flags.boolean({description: 'also report a C string or std::string buffer there'}),
    bytes: Flags.integer({description: `bytes of the object to show around the address (at most ${MAX_DUMP_BYTES})`, default: DUMP_BYTES, min: MIN_DUMP_BYTES, max: MAX_DUMP_BYTES}),
  }

  async run() {
    const {args, flags} = await this.parse(FindObject)
    const address = parseAddress(args.address)
    const {index, corePath, program: openProgramOfIndex} = await openIndex(args.core, flags, note, 'model')
    const program = openProgramOfIndex()
    const info = objectInfo(program, index, address, flags.strings, flags.bytes)
    if (!this.jsonEnabled()) this.log(findObjectText(info, corePath))
    return {core: corePath, ...info}
  }
}

