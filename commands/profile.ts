import * as Flags from '../src/cli/flags.js'
import {heapProfile} from '../src/queries/heap-profile.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {EXIT_NO_SAMPLES} from '../src/cli/exit-codes.js'
import {openIndex} from '../src/cli/open-index.js'
import {programInputs, writeOutput} from '../src/cli/output-file.js'
import {indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {TomaError} from '../src/errors.js'
import {legacyHeapProfile} from '../src/report/profile-legacy.js'
import {pprofHeapProfile} from '../src/report/profile-pprof.js'

export default class Profile extends TomaCommand {
  static override enableJsonFlag = false
  static override description =
    "Write TCMalloc's sampled live objects (a process run with TCMALLOC_SAMPLE_PARAMETER) as a heap profile: pprof's profile.proto (gzipped), or gperftools' own heap-sample text"
  static override examples = [
    '<%= config.bin %> profile core.1234 -o heap.pb.gz && pprof -top heap.pb.gz',
    '<%= config.bin %> profile core.1234 --format legacy -o heap.txt',
  ]
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    format: Flags.string({description: 'pprof: profile.proto, gzipped; legacy: the text MallocExtension::GetHeapSample writes', options: ['pprof', 'legacy'], default: 'pprof'}),
    output: Flags.string({char: 'o', description: 'write to this file instead of standard output (replaced only when complete)'}),
    force: Flags.boolean({description: 'replace an existing file that is not a heap profile'}),
    'sample-period': Flags.integer({description: 'the TCMALLOC_SAMPLE_PARAMETER the process ran with, when the core does not say (no tcmalloc symbols)', min: 1}),
  }

  async run() {
    const {args, flags} = await this.parse(Profile)
    const {index, indexPath, program} = await openIndex(args.core, flags, note)
    const profile = heapProfile(program(), index, flags['sample-period'])
    if (!profile) {
      throw new TomaError('no sampled objects in this core: TCMalloc samples only when the process ran with TCMALLOC_SAMPLE_PARAMETER > 0, and libtcmalloc_minimal never does', EXIT_NO_SAMPLES)
    }
    if (flags.format === 'pprof' && (!flags.output || flags.output === '-') && process.stdout.isTTY) throw new TomaError('the pprof format is binary: give -o FILE (or redirect standard output)')
    const data = flags.format === 'legacy' ? Buffer.from(legacyHeapProfile(profile)) : pprofHeapProfile(profile)
    // A heap profile of either format (gzip's magic, or the legacy text's first words) may be replaced.
    const ownKind = (head: Buffer) => (head[0] === 0x1f && head[1] === 0x8b) || head.toString('latin1').startsWith('heap profile:')
    await writeOutput(flags.output, data, {kind: 'heap profile', ownKind, inputs: [...programInputs(program()), indexPath], force: flags.force})
    const total = profile.samples.reduce((n, s) => n + s.requestedSize, 0)
    if (flags.output && flags.output !== '-') note(`${profile.samples.length} sampled objects (${total} bytes requested, sampling period ${profile.period}) written to ${flags.output}`)
  }
}
