import * as Flags from '../src/cli/flags.js'
import {checkLimits, type LimitCheck} from '../src/queries/check-limits.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {printable} from '../src/util/printable.js'
import {nearest} from '../src/cli/nearest-names.js'
import {openIndex} from '../src/cli/open-index.js'
import {parseSize, SIZE_FORMS} from '../src/cli/parse-size.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {TomaError} from '../src/errors.js'
import {bytes} from '../src/report/table.js'

/** Exit code of a check with a broken limit (2 stays bad input, as for every command). */
const EXIT_LIMIT_BROKEN = 1

export default class Check extends TomaCommand {
  static override description = 'For CI: exit 1 with one line per limit the core breaks (leaked, live or one type\'s bytes, warnings), else 0'
  static override examples = [
    '<%= config.bin %> check core.1234 --max-leaked-bytes 0',
    '<%= config.bin %> check core.1234 --max-live-bytes 2GiB --max-type "app::Session=10MB" --max-warnings 0 --json',
  ]
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    'max-leaked-bytes': Flags.string({description: `at most this many bytes in live objects no root reaches (${SIZE_FORMS})`}),
    'max-live-bytes': Flags.string({description: 'at most this many bytes in live objects'}),
    'max-type': Flags.string({description: 'TYPE=SIZE: at most SIZE bytes in live objects of TYPE (as toma classes names it); repeatable', multiple: true}),
    'max-warnings': Flags.integer({description: 'at most this many analysis warnings', min: 0}),
  }

  async run() {
    const {args, flags} = await this.parse(Check)
    const size = (v: string | undefined) => (v === undefined ? undefined : parseSize(v))
    const limits = {
      leakedBytes: size(flags['max-leaked-bytes']),
      liveBytes: size(flags['max-live-bytes']),
      types: (flags['max-type'] ?? []).map(typeLimit),
      warnings: flags['max-warnings'],
    }
    if (limits.leakedBytes === undefined && limits.liveBytes === undefined && limits.types.length === 0 && limits.warnings === undefined) {
      throw new TomaError('no limit given: use --max-leaked-bytes, --max-live-bytes, --max-type TYPE=SIZE or --max-warnings')
    }
    // Live bytes alone are the heap model's; leaks, warnings and types by every naming tier need the graph.
    const modelOnly = limits.leakedBytes === undefined && limits.types.length === 0 && limits.warnings === undefined
    const {index, corePath} = await openIndex(args.core, flags, note, modelOnly ? 'model' : 'graph')
    const result = checkLimits(index, limits)
    // A misspelt type would hold any limit with 0 bytes: a gate that always passes is worse than none.
    const unknown = result.unknownTypes[0]
    if (unknown !== undefined) {
      const near = nearest(unknown, index.meta.typeNames, 3)
      throw new TomaError(`--max-type ${unknown}: no object in this core has that type${near.length ? `; closest: ${near.join(', ')}` : ''} (toma classes lists the types)`)
    }
    if (!result.passed) process.exitCode = EXIT_LIMIT_BROKEN
    if (!this.jsonEnabled()) {
      const broken = result.checks.filter(c => !c.ok)
      if (broken.length === 0) this.log(`${printable(corePath)}: ${result.checks.length === 1 ? 'the limit holds' : `all ${result.checks.length} limits hold`}`)
      for (const c of broken) this.log(`${printable(corePath)}: ${limitText(c)}`)
    }
    return {core: corePath, ...result}
  }
}

/** `TYPE=SIZE` (the type may itself hold '=' in a template argument: the size is after the last one). */
function typeLimit(text: string): {type: string; bytes: number} {
  const at = text.lastIndexOf('=')
  if (at <= 0) throw new TomaError(`--max-type ${text}: expected TYPE=SIZE (e.g. app::Session=10MB)`)
  return {type: text.slice(0, at), bytes: parseSize(text.slice(at + 1))}
}

function limitText(c: LimitCheck): string {
  const amount = (n: number) => (c.limit === 'warnings' ? String(n) : `${bytes(n)} (${n})`)
  return `${c.limit} ${amount(c.measured)} over the limit ${amount(c.max)}`
}
