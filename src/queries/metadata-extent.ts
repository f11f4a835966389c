import type {AddressSpace} from '../core/address-space.js'
import type {Interval} from '../heap/interval.js'

/** The allocator's metadata bytes inside one segment of the core (its start: the segment's key). */
export interface MetadataInSegment {
  segment: number
  bytes: number
}

/**
 * Where the allocator's metadata lies, as the summary stores it for `toma memory`: its bytes per
 * segment of the core (a few entries, where the intervals can be hundreds of thousands of freed
 * records), and those in no segment. Both walks are over sorted lists: one pass.
 */
export function metadataExtent(memory: AddressSpace, located: readonly Interval[], spans: readonly Interval[]): {bytes: number; bySegment: MetadataInSegment[]; outsideSegments: number} {
  const bySegment: MetadataInSegment[] = []
  let bytes = 0
  let inside = 0
  const segments = memory.segments
  let s = 0
  for (const iv of outside(located, spans)) {
    bytes += iv.end - iv.start
    while (s < segments.length && segments[s]!.end <= iv.start) s++
    // An interval may run over several segments: each gets its part.
    for (let k = s; k < segments.length && segments[k]!.start < iv.end; k++) {
      const seg = segments[k]!
      const part = Math.min(iv.end, seg.end) - Math.max(iv.start, seg.start)
      if (part <= 0) continue
      inside += part
      const last = bySegment[bySegment.length - 1]
      if (last?.segment === seg.start) last.bytes += part
      else bySegment.push({segment: seg.start, bytes: part})
    }
  }
  return {bytes, bySegment, outsideSegments: bytes - inside}
}

/** The parts of sorted, merged intervals outside other sorted, merged intervals (exact to the byte). */
function outside(intervals: readonly Interval[], cut: readonly Interval[]): Interval[] {
  const out: Interval[] = []
  let c = 0
  for (const iv of intervals) {
    while (c < cut.length && cut[c]!.end <= iv.start) c++
    let pos = iv.start
    for (let k = c; k < cut.length && cut[k]!.start < iv.end; k++) {
      if (cut[k]!.start > pos) out.push({start: pos, end: cut[k]!.start})
      pos = Math.max(pos, cut[k]!.end)
    }
    if (pos < iv.end) out.push({start: pos, end: iv.end})
  }
  return out
}
