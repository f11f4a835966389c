import {threadsOf} from '../src/analysis/threads.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {threadsText} from '../src/report/threads.js'

export default class Threads extends TomaCommand {
  static override description = 'One line per thread: start routine, stack used, thread-cache bytes, top frames, the thread that took the signal'
  static override args = queryCoreArgs
  static override flags = indexFlags

  async run() {
    const {args, flags} = await this.parse(Threads)
    const {index, program} = await openIndex(args.core, flags, note)
    const threads = threadsOf(program(), index)
    if (!this.jsonEnabled()) this.log(threadsText(threads))
    return threads
  }
}
