import {TomaCommand, moduleFlags, note} from '../src/cli/base-command.js'
import {openProgram} from '../src/program/open-program.js'
import {requiredCoreArg} from '../src/cli/query-flags.js'
import {infoData, infoText} from '../src/report/info.js'
import {hex} from '../src/errors.js'
import {count} from '../src/report/wording.js'

export default class Info extends TomaCommand {
  static override description = 'Show a core\'s threads, modules and mappings'
  static override examples = ['<%= config.bin %> info core.1234', '<%= config.bin %> info core.1234 --json']
  static override args = {core: requiredCoreArg('the core file')}
  static override flags = {...moduleFlags}

  async run() {
    const {args, flags} = await this.parse(Info)
    const program = openProgram(args.core, flags)
    for (const line of program.compressed?.notes ?? []) note(line)
    const cut = program.core.truncation
    if (cut) {
      note(`warning: ${args.core} is truncated: ${count(cut.segments, 'segment')} miss${cut.segments === 1 ? 'es' : ''} ${count(cut.missingBytes, 'byte')} from ${hex(cut.firstAddress)} on; reads there fail`)
    }
    const data = infoData(program)
    if (!this.jsonEnabled()) this.log(infoText(data))
    return data
  }
}
