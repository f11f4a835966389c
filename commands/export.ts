import * as Flags from '../src/cli/flags.js'
import {TomaCommand, note} from '../src/cli/base-command.js'
import {openIndex} from '../src/cli/open-index.js'
import type {OpenedIndex} from '../src/cli/opened-index.js'
import {parseAddress} from '../src/core/parse-address.js'
import {ADDRESS_FORMS, indexFlags, queryCoreArgs} from '../src/cli/query-flags.js'
import {dominatedBy} from '../src/queries/dominated.js'
import {RetentionIndex} from '../src/index/retention-index.js'
import {dominatorTreeDot} from '../src/report/dominator-dot.js'
import {rootFrame, rootRefLabel} from '../src/queries/root-label.js'
import {TomaError} from '../src/errors.js'
import {exportDot} from '../src/report/export-dot.js'
import {exportJson} from '../src/report/export-json.js'
import {objectHolders} from '../src/queries/holder-groups.js'
import {sampledAllocations} from '../src/queries/allocations.js'
import {TextSink} from '../src/report/output-stream.js'
import {OutputFile, programInputs} from '../src/cli/output-file.js'

export default class Export extends TomaCommand {
  static override enableJsonFlag = false
  static override description = 'Write the object graph: JSON in the toma-graph v1 contract, or Graphviz DOT around one object'
  static override examples = [
    '<%= config.bin %> export core.1234 --format json -o graph.json',
    '<%= config.bin %> export --format dot --around 0x55d0c0a01040 --depth 2 | dot -Tsvg > around.svg',
  ]
  static override args = queryCoreArgs
  static override flags = {
    ...indexFlags,
    format: Flags.string({description: 'output format', options: ['json', 'dot'], default: 'json'}),
    all: Flags.boolean({description: 'list free objects too (every state), not only live ones'}),
    output: Flags.string({char: 'o', description: 'write to this file instead of standard output (replaced only when complete)'}),
    force: Flags.boolean({description: 'replace an existing file that is not a graph toma wrote'}),
    around: Flags.string({description: `dot: the object to centre on, by an address in it: ${ADDRESS_FORMS}`}),
    dominators: Flags.boolean({description: 'dot: draw the dominator tree below the object (what it keeps alive) instead of its pointers'}),
    depth: Flags.integer({description: 'dot: edges to follow from it in either direction', default: 2, min: 0, max: 16}),
    'max-nodes': Flags.integer({description: 'dot: draw at most this many objects (the graph says what was left out)', default: 200, min: 1, max: 100_000}),
    'max-edges': Flags.integer({description: 'dot: draw at most this many arrows, parallel pointers merged into one (the graph says what was left out)', default: 1000, min: 0, max: 1_000_000}),
  }

  async run() {
    const {args, flags} = await this.parse(Export)
    const {index, corePath, indexPath, program: openProgramOfIndex} = await openIndex(args.core, flags, note)
    const out = OutputFile.open(flags.output, {
      kind: flags.format === 'dot' ? 'DOT graph' : 'toma-graph JSON file',
      ownKind: head => (flags.format === 'dot' ? head.toString('latin1').startsWith('digraph') || head.toString('latin1').startsWith('// toma') : head.toString('latin1').startsWith('{"format":"toma-graph"')),
      inputs: [...programInputs(openProgramOfIndex()), indexPath],
      force: flags.force,
    })
    try {
      await this.write(new TextSink(out.stream, out.name), flags, index, corePath, openProgramOfIndex)
      await out.finish()
    } catch (e) {
      out.abandon()
      throw e
    }
  }

  private async write(sink: TextSink, flags: {format: string; around?: string; dominators: boolean; depth: number; 'max-nodes': number; 'max-edges': number; all: boolean}, index: OpenedIndex['index'], corePath: string, openProgramOfIndex: OpenedIndex['program']): Promise<void> {
    if (flags.format === 'dot') {
      if (!flags.around) throw new TomaError('--format dot needs --around ADDR (the object to centre the subgraph on)')
      const around = parseAddress(flags.around)
      let dot: string
      if (flags.dominators) {
        const tree = dominatedBy(index, new RetentionIndex(index), around, {depth: flags.depth, limit: Math.max(1, Math.floor(flags['max-nodes'] / Math.max(1, flags.depth)))})
        dot = tree ? dominatorTreeDot(tree, corePath) : ''
      } else dot = exportDot(openProgramOfIndex(), index, corePath, around, flags.depth, {maxNodes: flags['max-nodes'], maxEdges: flags['max-edges']})
      if (!dot) throw new TomaError(`${flags.around} is not inside any heap object`)
      await sink.write(dot)
    } else {
      const program = openProgramOfIndex()
      await exportJson(index, corePath, flags.all, sink, program.core.arch.registerNames, r => ({label: rootRefLabel(program, index, r), frame: rootFrame(program, r)}), sampledAllocations(program, index), objectHolders(index))
    }
    await sink.close()
  }
}
