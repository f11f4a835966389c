import {TomaCommand, note} from '../src/cli/base-command.js'
import {IndexSession, setActiveSession} from '../src/cli/index-session.js'
import {openIndex, sessionKey} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {runShell} from '../src/cli/shell.js'

export default class Shell extends TomaCommand {
  static override description = 'An interactive prompt over one opened index: the same commands and flags, without paying the start-up for each'
  static override examples = ['<%= config.bin %> shell core.1234', 'echo "classes\\ntop --by type" | <%= config.bin %> shell core.1234']
  static override enableJsonFlag = false
  static override args = queryCoreArgs
  static override flags = indexFlags

  async run() {
    const {args, flags} = await this.parse(Shell)
    const session = new IndexSession(args.core)
    setActiveSession(session)
    try {
      // Opened (or analysed) once, before the first prompt; queries without a core use it.
      const opened = await openIndex(args.core, flags, note)
      session.defaultCore = opened.corePath
      await session.remember(sessionKey(opened.corePath, {}), () => {}, async () => opened)
      await runShell(this.config, session, opened.index.meta.typeNames)
    } finally {
      setActiveSession(null)
    }
  }
}
