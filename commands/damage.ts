import type {HeapDamage} from '../src/queries/heap-damage.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {damageLines} from '../src/report/damage.js'
import {aboutCore, heading} from '../src/report/table.js'

export default class Damage extends TomaCommand {
  static override description = 'Heap damage: broken free lists with the slot and value, the likely culprit, the crash, threads inside TCMalloc and locks held'
  static override examples = ['<%= config.bin %> damage core.1234', '<%= config.bin %> damage --json']
  static override args = queryCoreArgs
  static override flags = indexFlags

  async run() {
    const {args, flags} = await this.parse(Damage)
    const {index, corePath} = await openIndex(args.core, flags, note)
    const damage = (index.meta.summary as unknown as {damage: HeapDamage}).damage
    if (!this.jsonEnabled()) {
      this.log(aboutCore(corePath))
      this.log('', heading('Heap damage'))
      this.log(damageLines(damage).join('\n'))
    }
    return {core: corePath, ...damage}
  }
}
