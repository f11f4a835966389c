import type {ReportData} from '../../queries/report-data.js'
import {classesSection} from './classes.js'
import {leaksSection} from './leaks.js'
import {crossCheckSection, overviewSection, statesSection} from './overview.js'
import {htmlPage} from './page.js'
import {dominatorSection, suspectsSection} from './held-memory.js'
import type {ReportSection} from './section.js'
import {threadsSection} from './threads.js'
import {warningsSection} from './warnings.js'
import {damageSection} from './damage.js'
import {memorySection} from './memory.js'

/**
 * `toma report`'s page: the same data the query commands print, one section each. `extra`
 * sections (the comparison with a baseline core) come after the overview's figures and before
 * the details; a new part of the report is one more ReportSection passed here.
 */
/** Whether a file's first bytes are those of a page toma wrote (its generator tag, near the top). */
export function isTomaReport(head: Buffer): boolean {
  return head.toString('latin1').startsWith('<!DOCTYPE html>') && head.includes('<meta name="generator" content="toma">')
}

export function htmlReport(d: ReportData, toolVersion: string, extra: ReportSection[] = []): string {
  const s = d.summary
  const sections = [
    overviewSection(s),
    statesSection(s),
    crossCheckSection(s),
    ...damageSection(s.damage),
    ...extra,
    memorySection(d.memory),
    classesSection(d.classes),
    dominatorSection(d.top, d.topTypes),
    suspectsSection(d.suspects),
    leaksSection(d.leaks),
    threadsSection(d.threads, d.stacks),
    warningsSection(s.warnings),
  ]
  return htmlPage(`toma report: ${s.core.command ?? 'core'} (pid ${s.core.pid ?? '?'})`, `${d.core} · ${s.allocator.kind} ${s.allocator.version} · toma ${toolVersion}`, sections)
}
