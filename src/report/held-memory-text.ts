import chalk from 'chalk'
import type {Dominated, DominatedNode} from '../queries/dominated.js'
import type {ObjectBrief} from '../queries/object-brief.js'
import type {Paths, RootPath} from '../queries/paths.js'
import type {Suspects} from '../queries/suspects.js'
import type {Leaks} from '../queries/leaks.js'
import type {topObjects, topTypes} from '../queries/top.js'
import {bytes, heading, table} from './table.js'
import {ALLOCATOR_OWN, byteSize, count, objectKind, offset, percent, untypedKind, withCut} from './wording.js'
import {grouped} from '../util/grouped.js'
import type {HolderGroup} from '../queries/holder-groups.js'
import {hex} from '../errors.js'

/** A block size as people say it: `1 MiB`, `64 KiB`, `320 B` (exact, not rounded). */
export function blockSize(n: number): string {
  for (const [unit, b] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 1024]] as const) if (n >= b && n % b === 0) return `${grouped(n / b)} ${unit}`
  return `${grouped(n)} B`
}

/**
 * What holds a group and where it keeps the pointers: `slabclass[i]+0x18 (global in slabcache,
 * entries of 0x30 bytes)`, `anonymous mapping … +0x40, anchored by conn_arena …`.
 */
export function holderText(g: Pick<HolderGroup, 'holder' | 'offsets' | 'entries'>): string {
  const h = g.holder
  const many = g.offsets.length > 1
  const list = g.offsets.map(o => `+${hex(o)}`).join(', ') + (g.offsets.length >= 8 ? ', …' : '')
  const one = g.offsets.length === 1 ? `+${hex(g.offsets[0]!)}` : ''
  // A field of an array's entries as `[i]+field`; other offsets as they are.
  const field = g.entries
  const where = field ? `[i]+${hex(field.field)}` : one
  const at = field ? `, entries of ${hex(field.stride)} bytes` : many ? `, at ${list}` : ''
  switch (h.kind) {
    case 'type':
      return `${h.name}${where}${at ? ` (${at.slice(2)})` : ''}`
    case 'global':
      return `${h.name}${where} (global${h.module ? ` in ${h.module}` : ''}${at})`
    case 'frame':
      return `the frame of ${h.name}`
    case 'mapping': {
      const anchors = h.anchors?.length ? `; anchored by ${h.anchors.join('; ')}` : '; no global or stack slot points into it'
      return `${h.name}${where ? ` ${where}` : ''}${at ? ` (${at.slice(2)})` : ''}${anchors}`
    }
    case 'leaked':
      return 'nothing: leaked'
    default:
      return h.name
  }
}

/** `59 × 1 MiB blocks (untyped) held by slabclass+0x48 (global in slabcache)`. */
export function blockGroupText(g: Pick<HolderGroup, 'size' | 'objects' | 'holder' | 'offsets' | 'entries'>): string {
  return `${grouped(g.objects)} × ${blockSize(g.size)} ${g.objects === 1 ? 'block' : 'blocks'} (untyped) held by ${holderText(g)}`
}
import {printableData} from '../util/printable.js'

const kind = (o: ObjectBrief) => o.type ?? chalk.dim(untypedKind(o))
const named = (o: ObjectBrief) => `${chalk.bold(o.address)} ${kind(o)} ${byteSize(o.size)}`
const plural = (n: number, one: string, many = `${one}s`) => `${grouped(n)} ${n === 1 ? one : many}`

export function rootPathText(path: RootPath, indent = '  '): string[] {
  const p = printableData(path)
  const r = p.root
  const lines = [`${indent}${chalk.cyan(r.kind)} ${r.label}${r.address && r.kind !== 'global' ? ` @ ${r.address}` : ''} → ${offset(r.toOffset)}`]
  p.steps.forEach((s, i) => {
    lines.push(`${indent}  ${named(s.object)}${s.offset === null ? '' : `  .${offset(s.offset)} → ${offset(s.nextOffset ?? 0)}`}`)
    if (p.omitted && i === p.steps.length / 2 - 1) lines.push(`${indent}  ${chalk.dim(`… ${grouped(p.omitted)} more steps …`)}`)
  })
  return lines
}

export function pathsText(paths: Paths): string {
  const r = printableData(paths)
  const out = [`object ${named(r.object)}${r.offset ? `  (address is at ${offset(r.offset)})` : ''}`]
  if (r.object.state !== 'live') {
    out.push(`not live (${r.object.state}): nothing holds it`)
    return out.join('\n')
  }
  if (r.reachable) {
    out.push(`${r.paths.length === 1 ? 'shortest path' : `${r.paths.length} shortest paths, each from a different root`} (root first):`)
    r.paths.forEach((p, i) => {
      if (r.paths.length > 1) out.push(chalk.bold(`#${i + 1}`))
      out.push(...rootPathText(p))
    })
  } else if (r.allocatorOwn) {
    out.push(ALLOCATOR_OWN)
  } else {
    out.push(chalk.yellow('leaked: no root reaches it'))
    if (r.leakStarts.length) {
      out.push(`reached from ${plural(r.leakStarts.length, 'leaked object')} that nothing else points to:`)
      for (const s of r.leakStarts) out.push(`  ${named(s)}  retains ${bytes(s.retainedBytes)} in ${plural(s.retainedObjects, 'object')}`)
    }
  }
  if (r.searchCut) out.push(chalk.dim('(the backward search stopped after 200,000 objects: there may be more)'))
  return out.join('\n')
}

export function dominatedText(tree: Dominated): string {
  const d = printableData(tree)
  const out: string[] = []
  if (!d.inTree) return `object ${named(d.tree.object)} is not live: it retains nothing`
  out.push(
    `immediate dominator: ${d.immediateDominator ? named(d.immediateDominator) : d.onlyThread !== null ? `none: only thread ${d.onlyThread}'s registers, stack and TLS reach it` : 'none (roots hold it directly, or it starts a leaked structure)'}`,
  )
  const walk = (n: DominatedNode, depth: number) => {
    const pad = '  '.repeat(depth)
    out.push(`${pad}${named(n.object)}  retains ${bytes(n.retainedBytes)} in ${plural(n.retainedObjects, 'object')}`)
    for (const c of n.children) walk(c, depth + 1)
    const hidden = n.childCount - n.children.length
    if (hidden > 0 && n.children.length > 0) out.push(`${pad}  ${chalk.dim(`… ${plural(hidden, 'more child', 'more children')} retaining ${bytes(n.otherChildrenBytes)}`)}`)
    else if (hidden > 0) out.push(`${pad}  ${chalk.dim(`(${plural(hidden, 'child', 'children')} below; raise --depth)`)}`)
  }
  walk(d.tree, 0)
  return out.join('\n')
}

export function topObjectsText(top: ReturnType<typeof topObjects>): string {
  const t = printableData(top)
  return [
    heading(`${withCut(`Objects retaining the most: ${count(t.of, 'object')} held directly by roots or starting a leak`, t.listed, t.of)}; live heap ${bytes(t.liveBytes)}`),
    table(
      ['address', 'type', '#shallow', '#retained', '#objects', '#share', 'reachable'],
      t.objects.map(o => [o.address, objectKind(o), o.size, o.retainedBytes, o.retainedObjects, percent(o.share), o.reachable ? 'yes' : 'leaked']),
    ),
  ].join('\n')
}

export function topTypesText(top: ReturnType<typeof topTypes>): string {
  const t = printableData(top)
  return [
    heading(`${withCut(`Retained bytes per type and per group of untyped blocks (one size, one holder), each byte once: ${count(t.of, 'row')}`, t.listed, t.of)}; live heap ${bytes(t.liveBytes)}`),
    table(['type', '#retained', '#objects', '#share', 'via'], t.types.map(r => [r.type ?? (r.blocks ? blockGroupText(r.blocks) : '(untyped)'), r.retainedBytes, r.retainedObjects, percent(r.share), r.via ?? (r.blocks ? 'holder' : '')])),
  ].join('\n')
}

export function suspectsText(suspects: Suspects): string {
  const s = printableData(suspects)
  const out = [`live heap ${bytes(s.liveBytes)}; threshold ${percent(s.threshold)} (${bytes(Math.ceil(s.threshold * s.liveBytes))})`]
  if (!s.singles.length && !s.blocks.length && !s.groups.length && !s.leaks.length) out.push('no suspect: no object, type, group of blocks or leak retains that much')
  // Single objects and groups of untyped blocks, one numbering, the largest retained first.
  const ranked = [...s.singles.map(x => ({single: x, block: null})), ...s.blocks.map(b => ({single: null, block: b}))]
    .sort((a, b) => (b.single ?? b.block)!.retainedBytes - (a.single ?? a.block)!.retainedBytes)
  ranked.forEach(({single, block}, i) => {
    if (block) {
      out.push('', heading(`Suspect ${i + 1}: ${blockGroupText(block)} retain ${bytes(block.retainedBytes)} (${percent(block.share)}) in ${plural(block.retainedObjects, 'object')}`))
      out.push(`  ${bytes(block.bytes)} of their own; e.g. ${named(block.example)}`)
      return
    }
    const x = single!
    out.push('', heading(`Suspect ${i + 1}: ${kind(x.object)} at ${x.object.address} retains ${bytes(x.retainedBytes)} (${percent(x.share)}) in ${plural(x.retainedObjects, 'object')}`))
    if (x.path) out.push('path from a root:', ...rootPathText(x.path))
    const a = x.accumulationPoint
    out.push(
      x.accumulationDepth === 0
        ? `accumulation point: the suspect itself, fanning out into ${plural(a.children, 'child', 'children')}`
        : x.accumulationCut
          ? `no fan-out within ${plural(x.accumulationDepth, 'step')} down the dominator tree (a long chain: each object keeps the next alive); stopped at ${named(a)}, which retains ${bytes(a.retainedBytes)}`
          : `accumulation point, ${plural(x.accumulationDepth, 'step')} down the dominator tree: ${named(a)} retains ${bytes(a.retainedBytes)}, fanning out into ${plural(a.children, 'child', 'children')}`,
    )
    if (x.accumulated.length === 0) out.push('nothing accumulated below it: it is one block')
    else {
      out.push(`accumulated there (the largest groups of all ${plural(x.counted, 'object')} below it):`)
      out.push(table(['group', '#objects', '#bytes'], x.accumulated.map(g => [g.group, g.objects, g.bytes])).replace(/^/gm, '  '))
    }
  })
  if (s.groups.length) {
    out.push('', heading('Types whose objects together retain more than the threshold'))
    out.push(table(['type', '#retained', '#objects', '#share'], s.groups.map(g => [g.type, g.retainedBytes, g.retainedObjects, percent(g.share)])))
  }
  if (s.leaks.length) {
    out.push('', heading(`${withCut(`Leaked: ${bytes(s.leakedBytes)} from ${plural(s.leakStarts, 'starting point')}, largest first`, s.leaks.length, s.leakStarts)}`))
    out.push(table(['address', 'type', '#retained', '#objects', '#share'], s.leaks.map(l => [l.address, objectKind(l), l.retainedBytes, l.retainedObjects, percent(l.share)])))
  }
  return out.join('\n')
}

/**
 * The leaked objects by what they are: each type, and the untyped ones by size and holder when
 * they were grouped (else one "(untyped)" row), the most bytes first. `kind` is for people.
 */
export function leakKinds(l: Pick<Leaks, 'byType' | 'untypedGroups'>): Array<{kind: string; objects: number; bytes: number}> {
  const typed = l.byType.filter(t => t.type !== null || l.untypedGroups.length === 0)
  return [
    ...typed.map(t => ({kind: t.type ?? '(untyped)', objects: t.objects, bytes: t.bytes})),
    ...l.untypedGroups.map(g => ({kind: blockGroupText(g), objects: g.objects, bytes: g.bytes})),
  ].sort((a, b) => b.bytes - a.bytes)
}
