import defaultChalk, {type ChalkInstance} from 'chalk'
import type {HeapDamage} from '../queries/heap-damage.js'
import {count} from './wording.js'
import {grouped} from '../util/grouped.js'
import {printableData} from '../util/printable.js'

/**
 * Whether there is anything to say about damage, a crash or a process caught inside TCMalloc (for
 * analyze and the report; pointers into free slots alone are in most healthy heaps: `toma damage`
 * lists them).
 */
export function hasDamageNews(d: HeapDamage | undefined): boolean {
  return d !== undefined && (d.findings.length > 0 || d.crash !== null || d.threadsInAllocator.length > 0 || d.locks.length > 0)
}

/** The "Heap damage" section of `analyze` and the body of `toma damage` (and, without colour, of the HTML report's section). */
export function damageLines(damage: HeapDamage, chalk: ChalkInstance = defaultChalk): string[] {
  const d = printableData(damage)
  const out: string[] = []
  if (d.crash) {
    const c = d.crash
    const gp = c.faultAddress === '0x0' && c.following ? ' (the kernel reports 0 for a non-canonical address)' : ''
    out.push(`${chalk.bold('crash')}: thread ${c.tid} took ${c.signalName}${c.faultAddress ? ` at ${c.faultAddress}${gp}` : ''}${c.inAllocator ? ', inside TCMalloc' : ''}`)
    for (const f of c.frames.slice(0, 6)) out.push(`  ${f}`)
    if (c.following) out.push(`  it was reading ${c.following.structure}: ${c.following.register ?? 'a register'} holds ${c.following.value}, the value found there`)
  }
  if (d.findings.length === 0) out.push(d.crash ? 'no damaged free list found: every list TCMalloc keeps is consistent' : 'no damaged free list')
  for (const f of d.findings) {
    const tag = f.inFlight ? chalk.yellow('[in flight] ') : chalk.red(`[${f.kind}] `)
    out.push(`${tag}${f.structure} at ${f.structureAddress}`)
    out.push(`  slot ${f.slot}${f.entry ? ` (the link of free object ${f.entry})` : ''} holds ${f.value}${f.valueMeans ? `: ${f.valueMeans}` : ''}`)
    if (f.inside) out.push(`  the entry is ${f.inside.offset} bytes into the ${f.inside.state} ${f.inside.type || 'object'} at ${f.inside.address}: freed through an interior pointer; the rest of the list is intact and was walked`)
    if (f.twice) {
      const t = f.twice
      out.push(`  the ${t.type || `${t.size}-byte object`} at ${t.address} is held twice${t.reachedFirstAt ? `, first at ${t.reachedFirstAt}` : ''}: freed twice (a double free): two later allocations of its class will both return it`)
    }
    for (const h of f.pointedBy) out.push(`  still pointed to by the live ${h.type || 'object'} at ${h.address} +${h.offset} (${h.value}): a dangling pointer, the likely writer`)
    if (f.handedOut) out.push(`  the value is the first word of ${f.handedOut}, handed out from this list with that link: the object whose link was overwritten`)
    if (f.objectsBehind > 0) {
      const lost = f.objectsBehind - f.recovered
      out.push(
        `  ${count(f.objectsBehind, 'free object')} (${grouped(f.bytesBehind)} bytes) the list counts lie behind it:` +
          (f.recovered ? ` ${grouped(f.recovered)} found again by their own links, counted free${lost ? ';' : ''}` : '') +
          (lost ? ` ${grouped(lost)} unknown which (their links do not tell), counted live` : ''),
      )
    }
    if (f.culprit) {
      const c = f.culprit
      out.push(
        c.state === 'live'
          ? `  likely culprit: the live ${c.type || `${c.size}-byte object`} at ${c.address} (${c.how}); the damaged slot's first ${c.bytesPastEnd} bytes are non-zero: how far a write past this object's end shows in the core (a string's NUL is one more)`
          : `  the slot before it (${c.address}) is ${c.state}: no live neighbour wrote past its end`,
      )
    }
    if (f.inFlight) out.push('  its lock was held, or its thread was running TCMalloc, when the core was taken: caught mid-update, or damaged (the core cannot tell which)')
  }
  if (d.omitted > 0) out.push(`… and ${grouped(d.omitted)} more findings not listed`)
  if (d.unknownBehindDamage.objects > 0) {
    out.push(`unknown: ${count(d.unknownBehindDamage.objects, 'object')} (${grouped(d.unknownBehindDamage.bytes)} bytes) behind damaged lists: free by TCMalloc's counts, unreachable by its links, counted live here`)
  }
  const dp = d.danglingPointers
  if (dp.count > 0) {
    out.push(`${count(dp.count, 'pointer')} from live objects into free slots (dangling if the program still reads them; stale fields, such as a pointer kept after delete, are common and harmless)${dp.kept < dp.count ? `; the first ${grouped(dp.kept)} grouped` : ''}:`)
    for (const g of dp.groups) out.push(`  ${grouped(g.pointers)} × ${g.holder} +${g.offset} → ${Object.entries(g.targets).map(([state, n]) => `${grouped(n)} ${state}`).join(', ')} (e.g. ${g.example.holder} → ${g.example.target})`)
    if (dp.moreGroups) out.push(`  … and ${grouped(dp.moreGroups)} more groups`)
  }
  if (d.threadsInAllocator.length) {
    out.push(`${count(d.threadsInAllocator.length, 'thread')} inside TCMalloc when the core was taken:`)
    for (const t of d.threadsInAllocator) out.push(`  thread ${t.tid}: ${t.frames.slice(0, 3).join(' < ')}${t.atPc ? '' : ' (called out of TCMalloc)'}`)
  }
  if (d.locks.length) {
    const who = (l: HeapDamage['locks'][number]) =>
      `${l.heldBy.length ? `, held by thread ${l.heldBy.join(' or ')} (inside the code that takes it)` : ''}${l.waiting.length ? `, ${count(l.waiting.length, 'thread')} waiting (${l.waiting.join(', ')})` : ''}`
    out.push(`locks held: ${d.locks.map(l => `${l.name} = ${l.word}${who(l)}`).join('; ')}`)
  }
  else if (d.threadsInAllocator.length) out.push(`locks held: none${d.pageHeapLockKnown ? '' : ' of the central free lists (the page heap lock could not be located)'}`)
  if (d.touchedFigures.length) out.push(`figures this touches (bounds, not exact): ${d.touchedFigures.map(t => `${t.property} (${t.why})`).join(', ')}`)
  return out
}
