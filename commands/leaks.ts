import {Args, Flags} from '@oclif/core'
import {leaksOf} from '../src/analysis/leaks.js'
import {TomaCommand} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags} from '../src/cli/query-flags.js'
import {bytes, heading, table} from '../src/report/table.js'

export default class Leaks extends TomaCommand {
  static override description = 'Live objects that no root (register, stack, TLS, global, mapping, cached stack) reaches, directly or through other objects'
  static override args = {core: Args.string({description: 'the core (or its .toma-index); default: the latest analysis in this folder'})}
  static override flags = {...indexFlags, limit: Flags.integer({description: 'list at most this many objects, largest first', default: 50, min: 0})}

  async run() {
    const {args, flags} = await this.parse(Leaks)
    const {index} = openIndex(args.core, flags, line => process.stderr.write(`toma: ${line}\n`))
    const leaks = leaksOf(index, flags.limit)
    if (!this.jsonEnabled()) {
      this.log(`${leaks.objects.toLocaleString('en-US')} live objects (${bytes(leaks.bytes)}) are reachable from no root`)
      const own = leaks.allocatorInternal
      if (own.objects > 0) this.log(`(not counted: ${own.objects.toLocaleString('en-US')} unreferenced allocation${own.objects === 1 ? '' : 's'} of TCMalloc itself, ${bytes(own.bytes)}, e.g. its MallocExtension singleton)`)
      if (leaks.objects > 0) {
        this.log('', heading('By type'))
        this.log(table(['type', '#objects', '#bytes'], leaks.byType.map(t => [t.type ?? '(untyped)', t.objects, t.bytes])))
        this.log('', heading(`Largest ${leaks.largest.length}`))
        this.log(
          table(
            ['address', '#size', 'type', '#pointed to by', '#points to'],
            leaks.largest.map(o => [o.address, o.size, o.type ?? '(untyped)', o.pointedToBy, o.pointsTo]),
          ),
        )
      }
    }
    return leaks
  }
}
