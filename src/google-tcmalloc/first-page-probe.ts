import type {AddressSpace} from '../core/address-space.js'
import type {GoogleLayout} from './layout.js'
import type {PageEntry} from './page-map.js'

/** Bytes of a span record searched for its first page: the largest record of any family read (128). */
const RECORD_BYTES = 128
/** Records read per candidate: enough to tell a field from chance, few enough to stay instant. */
const MAX_RECORDS = 256

/** Where the span records of one candidate walk keep their first page, as found in the records themselves. */
export interface FirstPageField {
  /** Byte offset of the 64-bit word in the record. */
  offset: number
  /** A whole 64-bit field, or the low 48 − kPageShift bits of the word (a bit-field at bit 0). */
  kind: 'fields' | 'bitfields'
  /** Records whose word there equals the page that names them. */
  matches: number
  /** Records read. */
  records: number
}

/**
 * The page map names each span in use at its first page, and every family's span record keeps
 * that page in one word (a whole field, or a bit-field at the word's bit 0). So where no layout
 * in the table reads the records, the records themselves still say where that word is: the
 * offset whose value equals the naming page in most records. This tells a user which field of
 * which family failed, never a layout to read by: a record holds more than its first page.
 */
export function probeFirstPage(memory: AddressSpace, entries: readonly PageEntry[], pageShift: number): FirstPageField | null {
  const mask = 2n ** BigInt(48 - pageShift) - 1n
  const counts = new Map<string, number>()
  const seen = new Set<number>()
  let records = 0
  for (const e of entries) {
    if (records >= MAX_RECORDS) break
    if (seen.has(e.record)) continue
    seen.add(e.record)
    const bytes = memory.readBytes(e.record, RECORD_BYTES)
    if (!bytes) continue
    records++
    const page = BigInt(e.page)
    for (let offset = 0; offset + 8 <= RECORD_BYTES; offset += 8) {
      const word = bytes.readBigUInt64LE(offset)
      if (word === page) counts.set(`fields:${offset}`, (counts.get(`fields:${offset}`) ?? 0) + 1)
      else if ((word & mask) === page) counts.set(`bitfields:${offset}`, (counts.get(`bitfields:${offset}`) ?? 0) + 1)
    }
  }
  let best: FirstPageField | null = null
  for (const [key, matches] of counts) {
    const [kind, offset] = key.split(':') as ['fields' | 'bitfields', string]
    if (!best || matches > best.matches) best = {offset: Number(offset), kind, matches, records}
  }
  return best
}

/** Where a layout puts the first page, in the probe's terms. */
export function layoutFirstPage(layout: GoogleLayout): {offset: number; kind: 'fields' | 'bitfields'} {
  const r = layout.span.record
  return r.kind === 'bitfields' ? {offset: r.bitsWord, kind: 'bitfields'} : {offset: r.firstPage, kind: 'fields'}
}

/** `a 35-bit field at byte 24` / `a whole word at byte 32`. */
export function describeFirstPage(f: {offset: number; kind: 'fields' | 'bitfields'}, pageShift: number): string {
  return f.kind === 'bitfields' ? `a ${48 - pageShift}-bit field at byte ${f.offset}` : `a whole word at byte ${f.offset}`
}
