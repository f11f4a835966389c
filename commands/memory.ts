import {memoryReport} from '../src/queries/memory.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import * as Flags from '../src/cli/flags.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {memoryText} from '../src/report/memory-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Memory extends TomaCommand {
  static override description = 'Where the memory went: every byte of the writable mappings once (heap by state, metadata, stacks, modules, other mappings), how full each size class\'s spans are, what pins the nearly empty ones, and the page heap\'s free runs'
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    rows: Flags.integer({description: 'rows of size classes and pinning groups to show', default: 20, min: 1, max: 100000}),
    examples: Flags.integer({description: 'addresses listed per pinning group (--json)', default: 3, min: 0, max: 10000000}),
  }

  async run() {
    const {args, flags} = await this.parse(Memory)
    const {index, program, corePath} = await openIndex(args.core, flags, note)
    const report = memoryReport(program(), index, {examples: flags.examples})
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${memoryText(report, flags.rows)}`)
    return {core: corePath, ...report}
  }
}
