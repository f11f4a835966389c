import {memoryReport} from '../src/queries/memory.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import * as Flags from '../src/cli/flags.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {memoryText} from '../src/report/memory-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Memory extends TomaCommand {
  static override description = 'Where the memory went: every byte of the writable mappings once (heap by state, metadata, stacks, modules, other mappings), how full each size class\'s spans are, what pins the nearly empty ones, the page heap\'s free runs and the live blocks that split them'
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    rows: Flags.integer({description: 'rows of size classes, pinning groups and live blocks splitting free runs to show (the last also in --json)', default: 20, min: 1, max: 100000}),
    examples: Flags.integer({description: 'addresses listed per pinning group (--json)', default: 3, min: 0, max: 10000000}),
  }

  async run() {
    const {args, flags} = await this.parse(Memory)
    const {index, program, corePath} = await openIndex(args.core, flags, note)
    const report = memoryReport(program(), index, {examples: flags.examples, splitters: flags.rows})
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${memoryText(report, flags.rows)}`)
    return {core: corePath, ...report}
  }
}
