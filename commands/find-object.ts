import {Flags} from '@oclif/core'
import {objectInfo} from '../src/analysis/object-info.js'
import {TomaCommand} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {parseAddress} from '../src/cli/parse-address.js'
import {addressArgs, indexFlags} from '../src/cli/query-flags.js'
import {findObjectText} from '../src/report/find-object.js'

export default class FindObject extends TomaCommand {
  static override description = 'Which heap object holds an address: its start, size, state, type and first bytes'
  static override examples = ['<%= config.bin %> find-object 0x55d0c0a01048', '<%= config.bin %> find-object 0x55d0c0a01048 core.1234 --strings']
  static override args = addressArgs
  static override flags = {...indexFlags, strings: Flags.boolean({description: 'also report a C string or std::string buffer there'})}

  async run() {
    const {args, flags} = await this.parse(FindObject)
    const address = parseAddress(args.address)
    const {index, program: openProgramOfIndex} = openIndex(args.core, flags, line => process.stderr.write(`toma: ${line}\n`))
    const program = openProgramOfIndex()
    const info = objectInfo(program, index, address, flags.strings)
    if (!this.jsonEnabled()) this.log(findObjectText(info))
    return info
  }
}

