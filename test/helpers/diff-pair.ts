import fs from 'node:fs'
import path from 'node:path'
import {FIXTURES, PAIRS, pairCorePath} from './fixture-core.js'

/** The pair of diffdemo cores: one process dumped twice (fixtures/README.md, "The diff pair"). */
export const DIFF_PAIR = 'v2.10-diff'

/** What diffdemo recorded about itself between its two dumps. */
export interface DiffTruth {
  holder: {address: string; class: string; fieldOffset: number; entriesBuffer: string}
  sizes: Record<string, number>
  before: Record<string, number> & {phase: {cacheRetainedBytes: number; counters: Record<string, number>}}
  after: Record<string, number> & {phase: {cacheRetainedBytes: number; counters: Record<string, number>}}
  change: {born: {type: string; count: number}; died: {type: string; count: number}; reusedAddresses: number; bornAddresses: string[]; diedAddresses: string[]}
}

/** The flags naming the pair's executable and libtcmalloc (the cores name paths of the generating machine). */
export const diffPairFlags = ['--exe', path.join(PAIRS, DIFF_PAIR, 'diffdemo'), '--tcmalloc', path.join(FIXTURES, 'v2.10-shared', 'libtcmalloc.so.4')]

/** Both cores copied into `work` as `before` and `after` (their indexes are then made beside them), and the truth. */
export async function copyDiffPair(work: string): Promise<{before: string; after: string; truth: DiffTruth}> {
  const before = path.join(work, 'before')
  const after = path.join(work, 'after')
  fs.copyFileSync(await pairCorePath(DIFF_PAIR, 'before'), before)
  fs.copyFileSync(await pairCorePath(DIFF_PAIR, 'after'), after)
  return {before, after, truth: JSON.parse(fs.readFileSync(path.join(PAIRS, DIFF_PAIR, 'truth.json'), 'utf8'))}
}
