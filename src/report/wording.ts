import {untypedKind} from '../queries/untyped-kind.js'
import {isAttachStop} from '../core/process-info.js'
import type {Sighting} from '../index/sighting-index.js'
import {grouped} from '../util/grouped.js'
import {printable} from '../util/printable.js'

/** A count with its noun in the right number: "1 live object", "4,246 live objects". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${grouped(n)} ${n === 1 ? singular : plural}`
}

/** What a cut list says about itself: nothing when whole, else "first N of M shown". */
export function cut(shown: number, total: number): string {
  return shown < total ? `first ${grouped(shown)} of ${grouped(total)} shown` : ''
}

/** A heading with its count, and the cut when the list below it is cut: "Points to 1,097 objects (first 100 of 1,097 shown)". */
export function withCut(text: string, shown: number, total: number): string {
  const c = cut(shown, total)
  return c ? `${text} (${c})` : text
}

/** A share of the live heap: one decimal, three below 0.1 %. */
export function percent(share: number): string {
  return `${(share * 100).toFixed(share < 0.001 ? 3 : 1)}%`
}

/**
 * The one way each kind of figure is written in text: an offset inside an object is hex, as
 * symbol+0x… and find-object's bytes are ("+0x18"); an object's exact size is grouped bytes
 * ("1,048,576 B"; bytes() rounds to KiB/MiB where a figure is about amounts); an untyped block is
 * named by its class, or as large (analysis/untyped-kind.ts).
 */
export function offset(n: number): string {
  return `+0x${n.toString(16)}`
}

/** An object's exact size: "1,048,576 B". */
export function byteSize(n: number): string {
  return `${grouped(n)} B`
}

export {untypedKind}

/** What an object is: its type, or which kind of untyped block. */
export function objectKind(o: {type: string | null; sizeClass: number}): string {
  return o.type ?? untypedKind(o)
}

/**
 * How an object's name reads, with its tier said (find-object's text, serve's object page): the
 * lead word (`type` for an exact type, `name` for any other tier's), the name, and the note on how
 * it was known: `type app::Order (vtable)`, `name std::string buffer (layout)`, `held by
 * g_roots+0x38 (a holder name, not a type: …)`; no name: `type unknown (no tier named it)`.
 */
export function namingWords(o: {type: string | null; name: string | null; via: string | null; state: string}): {lead: string; name: string | null; note: string} {
  if (o.type !== null) return {lead: 'type', name: o.type, note: `(${o.via})`}
  if (o.via === 'holder') return {lead: '', name: o.name, note: '(a holder name, not a type: no tier named it)'}
  if (o.name !== null) return {lead: 'name', name: o.name, note: `(${o.via})`}
  return {lead: 'type', name: null, note: o.state === 'live' ? 'unknown (no tier named it)' : 'none (not live)'}
}

/**
 * How a frame was found, where that is not its call-frame information (the stack and thread
 * views, text and HTML): by the frame-pointer chain; or by the link register (x30), the caller of
 * an aarch64 leaf or PLT stub that saved nothing; and whether a signal stopped it.
 */
export function frameHowText(f: {how: string; signalFrame: boolean}): string {
  const how = f.how === 'frame-pointer' ? ', by frame pointer' : f.how === 'link-register' ? ', by link register' : ''
  return `${how}${f.signalFrame ? ', signal frame' : ''}`
}

/** People's words for a sighting. */
export function sightingText(s: Sighting): string {
  return printable(`last seen in a returned frame of ${s.function ?? s.frame} in thread ${s.tid} (at ${s.at})`)
}

/** The core's signal (NT_SIGINFO): number, si_code, fault address; what gcore's own stop is, said. */
export function signalText(s: {signo: number; code: number; faultAddress: string | null}): string {
  const text = `signal ${s.signo} (code ${s.code}${s.faultAddress ? `, fault address ${s.faultAddress}` : ''})`
  return isAttachStop(s) ? `${text}: stopped by gcore (the SIGSTOP the kernel sends as a debugger attaches)` : text
}

/** What the allocator's own unreferenced allocations are, by example (the leaks' "not counted" line in every output). */
export const ALLOCATOR_OWN_EXAMPLES = "e.g. its MallocExtension singleton, a sampled object's proxy"

/** An object no root reaches that the allocator keeps for itself (a sampled object's proxy, its singleton). */
export const ALLOCATOR_OWN = "TCMalloc's own: no root of the program reaches it, the allocator keeps it (not a leak)"
