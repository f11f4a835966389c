import type {HeapIndex} from '../index/heap-index.js'
import {classCounts} from './classes.js'
import {leaksOf} from './leaks.js'

/** The limits `toma check` enforces, each optional; bytes are byte counts. */
export interface Limits {
  leakedBytes?: number
  liveBytes?: number
  /** Live bytes of objects of one type (the type's name as `toma classes` prints it). */
  types: Array<{type: string; bytes: number}>
  warnings?: number
}

export interface LimitCheck {
  /** Which limit: 'leaked-bytes', 'live-bytes', 'type <name>', 'warnings'. */
  limit: string
  max: number
  measured: number
  ok: boolean
}

/**
 * Each limit given against the index's figures: leaked bytes as `toma leaks` counts them (live
 * objects no root reaches, TCMalloc's own left out), live bytes and per-type live bytes as
 * `toma classes`, and the analysis's warnings. `unknownTypes` are limited types no object of the
 * core has (their measure is 0: a misspelt name would hold any limit, so the caller refuses them).
 */
export function checkLimits(index: HeapIndex, limits: Limits) {
  const checks: LimitCheck[] = []
  const add = (limit: string, max: number, measured: number) => checks.push({limit, max, measured, ok: measured <= max})
  if (limits.leakedBytes !== undefined) add('leaked-bytes', limits.leakedBytes, leaksOf(index, 0).bytes)
  const unknownTypes: string[] = []
  if (limits.liveBytes !== undefined || limits.types.length > 0) {
    const counts = classCounts(index)
    const live = [...counts.types, ...counts.untyped].reduce((sum, c) => sum + c.bytes, 0)
    if (limits.liveBytes !== undefined) add('live-bytes', limits.liveBytes, live)
    for (const {type, bytes} of limits.types) {
      const found = counts.types.find(t => t.type === type)
      if (!found && !index.meta.typeNames.includes(type)) unknownTypes.push(type)
      add(`type ${type}`, bytes, found?.bytes ?? 0)
    }
  }
  if (limits.warnings !== undefined) add('warnings', limits.warnings, (index.meta.summary as {warnings?: {total?: number}}).warnings?.total ?? 0)
  return {passed: checks.every(c => c.ok), checks, unknownTypes}
}

export type CheckResult = ReturnType<typeof checkLimits>
