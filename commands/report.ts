import * as Flags from '../src/cli/flags.js'
import {diffCores} from '../src/queries/diff.js'
import {reportData} from '../src/queries/report-data.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {printable} from '../src/util/printable.js'
import {openDiffSide, refuseOtherProgram} from '../src/cli/open-diff-pair.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {programInputs, refuseOverwrite, writeOutput} from '../src/cli/output-file.js'
import {baselineSection} from '../src/report/html/baseline.js'
import {htmlReport, isTomaReport} from '../src/report/html/report.js'
import {bytes} from '../src/report/table.js'

export default class Report extends TomaCommand {
  static override description = 'Write one self-contained HTML report (no network, no other files): overview, states, classes, what retains memory, suspects, leaks, threads, warnings'
  static override examples = ['<%= config.bin %> report core.1234 -o report.html', '<%= config.bin %> report', '<%= config.bin %> report core.friday --baseline core.monday']
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    output: Flags.string({char: 'o', description: 'the HTML file to write (replaced only when complete)', default: 'toma-report.html'}),
    force: Flags.boolean({description: 'replace an existing file that is not a report toma wrote'}),
    baseline: Flags.string({description: 'an earlier core (or its .toma-index) of the same program: adds a section of what changed since (what toma diff BASELINE CORE says)'}),
  }

  async run() {
    const {args, flags} = await this.parse(Report)
    // A baseline of another program is refused as toma diff refuses it: before either core is analysed when both are named.
    if (flags.baseline && args.core) refuseOtherProgram(flags.baseline, args.core)
    const {index, corePath, indexPath, program} = await openIndex(args.core, flags, note)
    const rules = {kind: 'HTML report of toma', ownKind: isTomaReport, inputs: [...programInputs(program()), indexPath], force: flags.force}
    // Refused before the report is made (minutes on a big core), and again when it is written.
    refuseOverwrite(flags.output, rules)
    const extra = []
    if (flags.baseline) {
      if (corePath !== args.core) refuseOtherProgram(flags.baseline, corePath)
      // --index names this core's index; the baseline's is its own (beside it, or the one given as --baseline).
      const before = await openDiffSide(flags.baseline, {...flags, index: undefined}, note)
      extra.push(baselineSection(diffCores(before, {index, program: program(), corePath})))
    }
    const page = htmlReport(reportData(program(), index, corePath), this.config.version, extra)
    await writeOutput(flags.output, page, rules)
    const size = Buffer.byteLength(page)
    if (!this.jsonEnabled()) this.log(printable(`report on ${corePath}${flags.baseline ? ` compared with ${flags.baseline}` : ''} written to ${flags.output} (${bytes(size)})`))
    return {core: corePath, ...(flags.baseline ? {baseline: flags.baseline} : {}), report: flags.output, bytes: size}
  }
}
