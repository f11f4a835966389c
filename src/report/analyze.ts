import chalk from 'chalk'
import type {HeapSummary} from '../analysis/heap-summary.js'
import {bytes, heading, table} from './table.js'

export function analyzeText(s: HeapSummary, indexPath: string): string {
  const a = s.allocator
  const out: string[] = []
  out.push(`${chalk.bold('core')} ${s.core.path}  (${s.core.command ?? '?'} pid ${s.core.pid ?? '?'})`)
  out.push(`${chalk.bold('allocator')} gperftools ${a.version}  layout group ${a.layoutGroup}  page size ${a.pageSize / 1024} KiB  ${a.sizeClasses} size classes`)
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
  out.push('', heading(`Spans (${s.spans.total})`))
  out.push(table(['kind', '#spans', '#bytes', 'size'], Object.entries(s.spans.byKind).map(([k, v]) => [k, v.spans, v.bytes, bytes(v.bytes)])))
  out.push('', heading('Objects by state'))
  out.push(table(['state', '#objects', '#bytes', 'size'], s.states.map(r => [r.state, r.objects, r.bytes, bytes(r.bytes)])))
  out.push(`span tail waste (counted by TCMalloc as central-cache free): ${s.spanWasteBytes.toLocaleString('en-US')} bytes`)
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
        c.equal ? chalk.green('equal') : chalk.red(`differs by ${(c.toma - c.tcmalloc).toLocaleString('en-US')}`),
      ]),
    ),
  )
  const g = s.graph
  out.push('', heading('Object graph'))
  out.push(`${g.scannedObjects.toLocaleString('en-US')} live objects scanned (${bytes(g.scannedBytes)}), ${g.edges.toLocaleString('en-US')} pointers between them`)
  out.push(`roots (--roots ${g.roots.filter(r => r.used).map(r => r.option).join(',')}): ${g.roots.filter(r => r.used).map(r => `${r.count.toLocaleString('en-US')} ${r.kind} (${bytes(r.scannedBytes)} scanned)`).join(', ')}`)
  const unused = g.roots.filter(r => !r.used)
  if (unused.length) out.push(`  not used as roots: ${unused.map(r => r.option).join(', ')}`)
  out.push(`  not scanned: ${bytes(g.rootsNotScanned.allocatorBytes)} of heap spans and TCMalloc metadata, ${bytes(g.rootsNotScanned.deadStackBytes)} of dead stack below rsp`)
  out.push(`${g.typedObjects.toLocaleString('en-US')} objects typed by vtable, ${g.types} distinct types (toma classes lists them)`)
  out.push(`${g.unreachable.objects.toLocaleString('en-US')} live objects (${bytes(g.unreachable.bytes)}) are reachable from no root: leaked (toma leaks lists them)`)
  if (g.allocatorInternal.objects) out.push(`  not counted: ${g.allocatorInternal.objects.toLocaleString('en-US')} unreferenced allocation${g.allocatorInternal.objects === 1 ? '' : 's'} of TCMalloc itself (${bytes(g.allocatorInternal.bytes)}; e.g. its MallocExtension singleton)`)
  if (g.unreadableObjects) out.push(chalk.yellow(`${g.unreadableObjects} live objects could not be read from the core`))
  out.push('', heading(`Warnings (${s.warnings.total})`))
  if (s.warnings.total === 0) out.push('none: every list and counter is consistent')
  for (const w of s.warnings.first) out.push(chalk.yellow(`${w.kind}: ${w.message}`))
  if (s.warnings.total > s.warnings.first.length) out.push(`… and ${s.warnings.total - s.warnings.first.length} more (--json lists the first 50; counts by kind: ${JSON.stringify(s.warnings.byKind)})`)
  out.push('', `index written to ${indexPath}`)
  return out.join('\n')
}
