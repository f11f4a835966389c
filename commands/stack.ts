import * as Args from '../src/cli/args.js'
import * as Flags from '../src/cli/flags.js'
import {stackOf} from '../src/queries/threads.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {TomaError} from '../src/errors.js'
import {stackText} from '../src/report/threads-text.js'
import {aboutCore} from '../src/report/table.js'

export default class Stack extends TomaCommand {
  static override description = 'A thread\'s call stack with the heap pointers in each frame, and the frames of returned calls below it'
  static override args = {
    tid: Args.integer({description: 'the thread id (LWP), as `toma threads` lists it', required: true, ignoreStdin: true}),
    ...queryCoreArgs,
  }
  static override flags = {
    ...indexFlags,
    // A plain flag, not oclif's allowNo: a negated flag sends the call off the fast path (docs/ARCHITECTURE.md, "Start-up design").
    'no-returned': Flags.boolean({description: 'leave out the frames of calls that have returned (below the stack pointer)'}),
  }

  async run() {
    const {args, flags} = await this.parse(Stack)
    const {index, program, corePath} = await openIndex(args.core, flags, note)
    const p = program()
    const stack = stackOf(p, index, args.tid)
    if (!stack) throw new TomaError(`no thread ${args.tid} in this core (threads: ${p.core.threads.map(t => t.tid).join(', ')})`)
    const returned = !flags['no-returned']
    if (!this.jsonEnabled()) this.log(`${aboutCore(corePath)}\n${stackText(stack, {returned})}`)
    if (!returned) {
      const {deadFrames: _, ...live} = stack
      return {core: corePath, ...live}
    }
    return {core: corePath, ...stack}
  }
}
