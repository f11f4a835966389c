import {Args} from '@oclif/core'
import {classCounts} from '../src/analysis/classes.js'
import {TomaCommand} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags} from '../src/cli/query-flags.js'
import {heading, table} from '../src/report/table.js'

export default class Classes extends TomaCommand {
  static override description = 'Live objects and bytes per C++ type (and per size class for objects without a vtable)'
  static override args = {core: Args.string({description: 'the core (or its .toma-index); default: the latest analysis in this folder'})}
  static override flags = indexFlags

  async run() {
    const {args, flags} = await this.parse(Classes)
    const {index} = openIndex(args.core, flags, line => process.stderr.write(`toma: ${line}\n`))
    const counts = classCounts(index)
    if (!this.jsonEnabled()) {
      this.log(heading('Live objects by type'))
      this.log(table(['type', '#objects', '#bytes', '#retained'], counts.types.map(t => [t.type, t.objects, t.bytes, t.retainedBytes])))
      this.log('', heading('Live objects without a type, by size class'))
      this.log(
        table(
          ['#class', '#size', '#objects', '#bytes'],
          counts.untyped.map(u => [u.sizeClass === 0 ? 'large' : String(u.sizeClass), u.size === null ? 'pages' : String(u.size), u.objects, u.bytes]),
        ),
      )
    }
    return counts
  }
}
