import {threadsOf} from '../src/queries/threads.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {threadsText} from '../src/report/threads-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Threads extends TomaCommand {
  static override description = 'One line per thread: start routine, stack used, thread-cache bytes, top frames, the thread that took the signal'
  static override args = queryCoreArgs
  static override flags = indexFlags

  async run() {
    const {args, flags} = await this.parse(Threads)
    const {index, program, corePath} = await openIndex(args.core, flags, note)
    const threads = threadsOf(program(), index)
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${threadsText(threads)}`)
    return {core: corePath, ...threads}
  }
}
