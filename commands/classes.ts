import {classCounts} from '../src/queries/classes.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {aboutCore, heading, table} from '../src/report/table.js'

/** What a model-stage index leaves out of this list. */
const MODEL_ONLY = 'names by vtable only, no retained sizes: the index holds the heap model (toma analyze --stage model); the other naming tiers and retained sizes come with the graph stage (toma analyze)'

export default class Classes extends TomaCommand {
  static override description = 'Live objects and bytes per name: C++ type, library structure or runtime object, with how it was known (and per size class for objects without a name)'
  static override args = queryCoreArgs
  static override flags = indexFlags

  async run() {
    const {args, flags} = await this.parse(Classes)
    const {index, corePath} = await openIndex(args.core, flags, note, 'model')
    const counts = classCounts(index)
    if (!this.jsonEnabled()) {
      this.log(aboutCore(corePath))
      this.log('', heading('Live objects by name'))
      // The name last: a long template name then widens no other line. Retained: each byte once per name.
      this.log(table(['#objects', '#bytes', '#retained', 'via', 'name'], counts.types.map(t => [t.objects, t.bytes, t.retainedBytes ?? '-', t.via, t.type])))
      if (!counts.graph) this.log(MODEL_ONLY)
      this.log('', heading('Live objects without a name, by size class'))
      this.log(
        table(
          ['#class', '#size', '#objects', '#bytes'],
          counts.untyped.map(u => [u.sizeClass === 0 ? 'large' : u.sizeClass, u.size === null ? 'pages' : u.size, u.objects, u.bytes]),
        ),
      )
    }
    return {core: corePath, ...counts}
  }
}
