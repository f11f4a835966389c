import * as Args from '../src/cli/args.js'
import * as Flags from '../src/cli/flags.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {serveCores} from '../src/cli/serve-cores.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'

export default class Serve extends TomaCommand {
  static override description = 'Browse the heap in a browser: a read-only HTTP server on 127.0.0.1 with pages for the overview, classes, objects, the dominator tree, leaks, suspects, threads, memory, damage and the diff; prints one URL (with its access token) and runs until Ctrl-C'
  static override examples = ['<%= config.bin %> serve core.1234', '<%= config.bin %> serve core.friday core.monday', '<%= config.bin %> serve core.1234 --listen 127.0.0.1:8080']
  static override enableJsonFlag = false
  static override args = {
    ...queryCoreArgs,
    baseline: Args.string({description: 'an earlier core (or its .toma-index) of the same program: the Diff page compares with it', ignoreStdin: true}),
  }
  static override flags = {
    ...indexFlags,
    listen: Flags.string({description: 'ADDR:PORT to listen on (an IP address; port 0: a free one); default 127.0.0.1:0. Another address than loopback lets other machines in: a warning says so'}),
  }

  async run() {
    const {args, flags} = await this.parse(Serve)
    await serveCores(args.core, args.baseline, flags, this.config.version, note, url => this.log(url))
  }
}
