import chalk from 'chalk'
import type {NamingSummary} from '../queries/naming-summary.js'
import type {HeapSummary} from '../queries/heap-summary.js'
import type {WarningReport} from '../queries/warning-report.js'
import {bytes, heading, table} from './table.js'
import {ALLOCATOR_OWN_EXAMPLES, count, percent} from './wording.js'
import {grouped} from '../util/grouped.js'
import {damageLines, hasDamageNews} from './damage.js'
import {printable, printableData} from '../util/printable.js'

export function analyzeText(summary: HeapSummary, indexPath: string): string {
  const s = printableData(summary)
  const a = s.allocator
  const out: string[] = []
  out.push(`${chalk.bold('core')} ${s.core.path}  (${s.core.command ?? '?'} pid ${s.core.pid ?? '?'})`)
  out.push(`${chalk.bold('allocator')} ${a.kind} ${a.version}  layout ${a.kind === 'gperftools' ? 'group ' : 'family '}${a.layoutGroup}  page size ${a.pageSize / 1024} KiB  ${a.sizeClasses} size classes`)
  out.push(`  version: ${a.versionHow}`)
  out.push(`  module: ${a.module}${a.moduleFile && a.moduleFile !== a.module ? ` (file ${a.moduleFile})` : ''}`)
  out.push('', heading('Globals'))
  out.push(
    table(
      ['global', 'address', 'found by'],
      Object.entries(a.globals).map(([name, g]) => [name, g.address ?? '-', g.how]),
    ),
  )
  out.push('', heading(`Threads (${s.threads.length}) and thread caches (${s.threadCaches.length})`))
  out.push(
    table(
      ['thread cache', '#tid', '#objects', '#bytes'],
      s.threadCaches.map(c => [c.address, c.tid === null ? '?' : String(c.tid), c.objects, c.bytes]),
    ),
  )
  out.push(...unusedCacheNotes(s.threadCaches))
  out.push('', heading(`Spans (${s.spans.total})`))
  out.push(table(['kind', '#spans', '#bytes', 'size'], Object.entries(s.spans.byKind).map(([k, v]) => [k, v.spans, v.bytes, bytes(v.bytes)])))
  if (s.sampled.objects) {
    out.push(`${count(s.sampled.objects, 'sampled object')} with allocation stacks (${grouped(s.sampled.requestedBytes)} bytes requested; sampling period ${s.sampled.period === null ? 'unknown' : grouped(s.sampled.period)}): find-object shows each one's, toma profile writes them all`)
  }
  out.push('', heading('Objects by state'))
  out.push(table(['state', '#objects', '#bytes', 'size'], s.states.map(r => [r.state, r.objects, r.bytes, bytes(r.bytes)])))
  out.push(`span tail waste (counted by TCMalloc as central-cache free): ${grouped(s.spanWasteBytes)} bytes`)
  out.push('', heading('Top size classes by live bytes'))
  out.push(
    table(
      ['#class', '#size', '#live objects', '#live bytes', '#free objects'],
      s.topSizeClasses.map(c => [c.sizeClass, c.size, c.liveObjects, c.liveBytes, c.freeObjects]),
    ),
  )
  out.push('', heading('Cross-check against TCMalloc\'s own counters in the core'))
  out.push(
    table(
      ['figure', 'property', '#toma', '#tcmalloc', 'check'],
      s.crossCheck.map(c => [
        c.name,
        c.property,
        c.toma,
        c.tcmalloc,
        c.notIndependent
          ? chalk.yellow(`not independent (${c.notIndependent})`)
          : c.equal
            ? chalk.green('equal')
            : chalk.red(`differs by ${grouped(c.toma - c.tcmalloc)}`),
      ]),
    ),
  )
  out.push('', heading('Object graph'), ...graphLines(s))
  if (hasDamageNews(s.damage)) out.push('', heading('Heap damage'), ...damageLines(s.damage))
  out.push('', heading(`Warnings (${s.warnings.total})`))
  out.push(...warningLines(s.warnings))
  out.push('', `index written to ${printable(indexPath)}`)
  return out.join('\n')
}

/** The graph's figures, or what the model stage alone says in their place. */
function graphLines(s: HeapSummary): string[] {
  const g = s.graph
  const out: string[] = []
  if (!g) {
    out.push('not built: this index holds the heap model (--stage model): states, sizes, types by vtable')
    out.push(...namingLines(s.names))
    out.push('  the pointer scan, roots, leaks, paths, dominators and the other naming tiers come with the graph stage: toma analyze without --stage, or any query that needs them')
    return out
  }
  out.push(`${count(g.scannedObjects, 'live object')} scanned (${bytes(g.scannedBytes)}), ${count(g.edges, 'pointer')} between them`)
  out.push(`roots (--roots ${g.roots.filter(r => r.used).map(r => r.option).join(',')}): ${g.roots.filter(r => r.used).map(r => `${grouped(r.count)} ${r.kind} (${bytes(r.scannedBytes)} scanned)`).join(', ')}`)
  const unused = g.roots.filter(r => !r.used)
  if (unused.length) out.push(`  not used as roots: ${unused.map(r => r.option).join(', ')}`)
  out.push(`  not scanned: ${bytes(g.rootsNotScanned.allocatorBytes)} of heap spans and TCMalloc metadata, ${bytes(g.rootsNotScanned.deadStackBytes)} of dead stack below the stack pointer`)
  out.push(...namingLines(s.names))
  out.push(`${count(g.unreachable.objects, 'live object')} (${bytes(g.unreachable.bytes)}) ${g.unreachable.objects === 1 ? 'is' : 'are'} reachable from no root: leaked (toma leaks lists them)`)
  if (g.allocatorInternal.objects) out.push(`  not counted: ${count(g.allocatorInternal.objects, 'unreferenced allocation')} of TCMalloc itself (${bytes(g.allocatorInternal.bytes)}; ${ALLOCATOR_OWN_EXAMPLES})`)
  if (g.unreadableObjects) out.push(chalk.yellow(`${count(g.unreadableObjects, 'live object')} could not be read from the core`))
  return out
}

/** Every listed warning with its phase and addresses, what was not listed counted by phase, and the verdict. */
export function warningLines(report: WarningReport): string[] {
  const w = printableData(report)
  if (w.consistent) return ['none: every list and counter is consistent']
  const out = w.list.map(x => chalk.yellow(`[${x.phase}] ${x.kind}${x.addresses.length ? ` at ${x.addresses.join(', ')}` : ''}: ${x.message}${x.inFlight ? ` [in flight: ${x.inFlight}]` : ''}`))
  for (const [phase, n] of Object.entries(w.omitted)) out.push(`[${phase}] … and ${grouped(n)} more not listed`)
  const phases = Object.entries(w.byPhase).filter(([, n]) => n > 0).map(([p, n]) => `${grouped(n)} ${p}`)
  out.push(chalk.red(`not consistent: ${grouped(w.total)} warning${w.total === 1 ? '' : 's'} (${phases.join(', ')})`))
  return out
}

type CacheRow = HeapSummary['threadCaches'][number]

/**
 * Why a thread shows more than one cache. In gperftools before 2.16 a thread that allocates
 * before TCMalloc has set up its thread-specific data (the main thread, during startup) gets a
 * cache that is never stored in its TLS; its next allocation after the setup makes a second one,
 * and the first stays in thread_heaps_, unused. The TLS pointer read from the core tells which
 * one the thread uses.
 */
export function unusedCacheNotes(caches: CacheRow[]): string[] {
  const notes: string[] = []
  for (const c of caches) {
    if (c.tid === null || c.inTls !== false) continue
    const used = caches.find(u => u.tid === c.tid && u.inTls === true)
    if (!used) continue
    notes.push(
      `${c.address} (thread ${c.tid}) is not the cache the thread uses: its TLS points at ${used.address}. It is an older cache with the same pthread id,` +
        ' made when the thread allocated before TCMalloc had set up its thread-specific data (at startup); TCMalloc made the other at the' +
        ' thread\'s next allocation and never uses this one again, though it stays in thread_heaps_.',
    )
  }
  return notes
}

/** The named share of live bytes and what each tier named (naming-summary.ts). */
export function namingLines(n: NamingSummary): string[] {
  const tiers = n.byVia.map(v => `${grouped(v.objects)} by ${v.via} (${bytes(v.bytes)})`).join(', ')
  return [
    `names: ${percent(n.namedShare)} of live bytes named (${bytes(n.namedBytes)} of ${bytes(n.liveBytes)}), ${count(n.namedObjects, 'object')}${tiers ? `: ${tiers}` : ''}; ${count(n.distinctNames, 'distinct name')} (toma classes lists them)`,
    ...(n.conflicts ? [chalk.yellow(`  ${count(n.conflicts, 'object')} given two names: the first kept (listed under Warnings)`)] : []),
    ...n.notes.map(x => `  ${x}`),
  ]
}
