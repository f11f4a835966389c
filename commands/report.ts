import fs from 'node:fs'
import * as Flags from '@oclif/core/flags'
import {reportData} from '../src/analysis/report-data.js'
import {TomaCommand} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {TomaError} from '../src/errors.js'
import {htmlReport} from '../src/report/html/report.js'
import {bytes} from '../src/report/table.js'

export default class Report extends TomaCommand {
  static override description = 'Write one self-contained HTML report (no network, no other files): overview, states, classes, what retains memory, suspects, leaks, threads, warnings'
  static override examples = ['<%= config.bin %> report core.1234 -o report.html', '<%= config.bin %> report']
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    output: Flags.string({char: 'o', description: 'the HTML file to write', default: 'toma-report.html'}),
  }

  async run() {
    const {args, flags} = await this.parse(Report)
    const {index, corePath, program} = await openIndex(args.core, flags, line => process.stderr.write(`toma: ${line}\n`))
    // More parts (the comparison with a --baseline core) are ReportSections passed as htmlReport's third argument.
    const page = htmlReport(reportData(program(), index, corePath), this.config.version)
    try {
      fs.writeFileSync(flags.output, page)
    } catch (e) {
      throw new TomaError(`${flags.output}: cannot write: ${(e as Error).message}`)
    }
    const size = Buffer.byteLength(page)
    if (!this.jsonEnabled()) this.log(`report on ${corePath} written to ${flags.output} (${bytes(size)})`)
    return {core: corePath, report: flags.output, bytes: size}
  }
}
