import type {HeapProfile} from '../queries/heap-profile.js'
import {printable} from '../util/printable.js'

/**
 * gperftools' own heap-sample text, as MallocExtension::GetHeapSample writes it (2.10,
 * malloc_extension.cc): a `heap profile:` header with the totals and `heap_v2/<period>`, one line
 * per sampled object (count 1, the requested bytes, the stack as %p), then `MAPPED_LIBRARIES:` and
 * the memory map in ProcMapsIterator::FormatLine's layout. pprof reads it as a legacy heap profile.
 */
export function legacyHeapProfile(p: HeapProfile): string {
  let total = 0
  for (const s of p.samples) total += s.requestedSize
  const out = [`heap profile: ${countAndSize(p.samples.length, total)} heap_v2/${p.period}\n`]
  for (const s of p.samples) out.push(`${countAndSize(1, s.requestedSize)}${s.stack.map(pc => ` ${pointer(pc)}`).join('')}\n`)
  out.push('\nMAPPED_LIBRARIES:\n')
  // "%08llx-%08llx %c%c%c%c %08llx %02x:%02x %-11lld %s\n": a core has no device or inode (0).
  for (const m of p.maps) out.push(`${hex8(m.start)}-${hex8(m.end)} ${m.permissions} ${hex8(m.fileOffset)} 00:00 ${'0'.padEnd(11)} ${mapsPath(m.path)}\n`)
  return out.join('')
}

/**
 * A path as the kernel writes it in /proc/PID/maps, where gperftools read it: a newline as `\012`
 * (so a path cannot forge a line of the map); the other control characters, which the kernel
 * leaves raw, made printable for whoever reads the text.
 */
function mapsPath(path: string): string {
  return printable(path.replaceAll('\n', '\\012'))
}

/** "%6d: %8d [%6d: %8d] @" */
function countAndSize(count: number, bytes: number): string {
  const pair = `${String(count).padStart(6)}: ${String(bytes).padStart(8)}`
  return `${pair} [${pair}] @`
}

/** glibc's %p. */
function pointer(v: number): string {
  return v === 0 ? '(nil)' : `0x${v.toString(16)}`
}

function hex8(v: number): string {
  return v.toString(16).padStart(8, '0')
}
