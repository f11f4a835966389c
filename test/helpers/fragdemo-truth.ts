import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

// What fixtures/fragdemo's process recorded about itself once its heap was still (its README):
// MallocExtension's properties, GetStats' text, Ranges (every span), /proc/self/smaps.

export const FRAGDEMO_DIR = fileURLToPath(new URL('../../fixtures/fragdemo', import.meta.url))
/** The library the process ran with (same build-id as the demo fixture's). */
export const FRAGDEMO_TCMALLOC = fileURLToPath(new URL('../../fixtures/demo/libtcmalloc.so.4', import.meta.url))
export const FRAGDEMO_PAGE = 8192

export interface FragTruth {
  workerTid: number
  workerCacheBytes: number
  properties: Record<string, number>
  survivors: Array<{address: string; type: string; size: number}>
  /** The live large blocks (the odd ones of 40 + 2i pages). */
  large: Array<{address: string; size: number}>
  ranges: Array<{address: string; length: number; type: 'INUSE' | 'FREE' | 'UNMAPPED' | 'UNKNOWN'; fraction: number}>
  stats: string
  smaps: string
}

export const fragTruth = JSON.parse(fs.readFileSync(path.join(FRAGDEMO_DIR, 'truth.json'), 'utf8')) as FragTruth

/** /proc/self/smaps' writable mappings: their bytes. */
export function writableMappings(smaps: string): Array<{start: number; end: number; name: string}> {
  const out: Array<{start: number; end: number; name: string}> = []
  for (const m of smaps.matchAll(/^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+[ \t]*(.*)$/gm)) {
    if (m[3]![1] === 'w') out.push({start: parseInt(m[1]!, 16), end: parseInt(m[2]!, 16), name: m[4]!})
  }
  return out
}

/** The INUSE range (a span, from Ranges) holding an address. */
export function spanOf(address: number) {
  const r = fragTruth.ranges.find(x => x.type === 'INUSE' && Number(x.address) <= address && address < Number(x.address) + x.length)
  if (!r) throw new Error(`no INUSE range holds ${address.toString(16)}`)
  return r
}

/**
 * One survivor type's spans as the process knows them: the spans (from Ranges) holding its
 * survivors, each with its survivors and length, and those spans by share of slots live (0–10 %,
 * …, 90–100 %; spans with no survivor are not in it).
 */
export function survivorSpans(type: string) {
  const survivors = fragTruth.survivors.filter(s => s.type === type)
  const size = survivors[0]!.size
  const perSpan = new Map<string, {n: number; length: number}>()
  for (const s of survivors) {
    const r = spanOf(Number(s.address))
    const e = perSpan.get(r.address) ?? {n: 0, length: r.length}
    e.n++
    perSpan.set(r.address, e)
  }
  const histogram = new Array<number>(10).fill(0)
  for (const e of perSpan.values()) histogram[Math.min(9, Math.floor((e.n * 10) / Math.floor(e.length / size)))]!++
  return {survivors, size, perSpan, histogram}
}
