import type {HeapIndex, ObjectRef} from '../index/heap-index.js'
import type {Program} from '../program/program.js'
import {pointingWords, type PointingWord} from '../queries/object-info.js'
import {html, num, type Html} from '../report/html/html.js'
import {offset} from '../report/wording.js'
import {objectHref} from './links.js'
import {objectName, objectNameWithTier} from './object-link.js'

/** Bytes an object page shows first, and the most `bytes=` may ask (a page stays a page). */
export const PAGE_DUMP_BYTES = 4096
export const MAX_PAGE_DUMP_BYTES = 65536

/** What a dump shows: `length` bytes from offset `from` of the object (null: not in the core), and the aligned words in them that point somewhere. */
export interface ObjectDump {
  from: number
  length: number
  bytes: Buffer | null
  words: PointingWord[]
}

/**
 * `length` bytes of the object as the core holds them (at most its size), with the words that
 * point somewhere: from its start, or, where the address asked (`at`, an offset) lies past them,
 * from DUMP_LEAD bytes before its line, so that the dump holds it.
 */
export function objectDump(program: Program, index: HeapIndex, obj: ObjectRef, length: number, at: number): ObjectDump {
  const n = Math.min(length, obj.size)
  const from = at < n ? 0 : Math.min(Math.max(0, Math.floor(at / 16) * 16 - DUMP_LEAD), obj.size - n)
  const bytes = program.core.memory.readBytes(obj.start + from, n) ?? null
  return {from, length: n, bytes, words: bytes ? pointingWords(program, index, bytes, obj.start + from, obj.start) : []}
}

/** Bytes a dump shows before the line of an address deep inside a large object. */
const DUMP_LEAD = 256

/**
 * A hex dump, 16 bytes a line from the object's start, the line of `at` (the address asked, as an
 * offset) marked; each 8-byte word that points somewhere is a link to that address's page, titled
 * with what it points to. Then the words again, one a line, with their targets named.
 */
export function hexDumpHtml(index: HeapIndex, d: ObjectDump, at: number): Html {
  if (!d.bytes) return html`<p class="warn">the core does not hold these bytes</p>`
  const b = d.bytes
  const byOffset = new Map(d.words.map(w => [w.offset - d.from, w]))
  const lines: Html[] = []
  const width = offset(d.from + b.length).length
  for (let line = 0; line < b.length; line += 16) {
    const parts: Html[] = []
    for (let w = line; w < Math.min(line + 16, b.length); w += 8) {
      const text = b.subarray(w, Math.min(w + 8, line + 16, b.length)).toString('hex').replace(/(..)(?!$)/g, '$1 ')
      const word = byOffset.get(w)
      parts.push(word ? html`<a href="${objectHref(Number(word.value))}" title="${targetText(index, word)}">${text}</a>` : html`${text}`)
    }
    const ascii = b.subarray(line, line + 16).toString('latin1').replace(/[^\x20-\x7e]/g, '.')
    const here = at >= d.from + line && at < d.from + line + 16
    lines.push(html`${here ? '→' : ' '} <span class="dim">${offset(d.from + line).padStart(width)}</span>  ${parts.map((p, i) => html`${i ? '  ' : ''}${p}`)}${' '.repeat(48 - lineWidth(b.length - line))}  ${ascii}\n`)
  }
  const table = d.words.length
    ? html`<table class="pointer-words"><thead><tr><th>at</th><th>word</th><th>points to</th></tr></thead><tbody>${d.words.map(w => html`<tr><td>${offset(w.offset)}</td><td><a href="${objectHref(Number(w.value))}">${w.value}</a></td><td>${targetHtml(index, w)}</td></tr>`)}</tbody></table>`
    : html`<p class="dim">no word here points into the heap, a module or a stack</p>`
  return html`<pre class="hexdump">${lines}</pre>
<h3>Pointer words (${num(d.words.length)})</h3>
${table}`
}

/** Characters of a line's hex part for its `n` bytes (48 for a whole line: two groups of 8, two spaces between). */
function lineWidth(n: number): number {
  const k = Math.min(n, 16)
  return k <= 8 ? 3 * k - 1 : 3 * k
}

function targetText(index: HeapIndex, w: PointingWord): string {
  if (w.to.kind !== 'object') return w.to.label
  return `${w.to.address}${w.to.offset ? offset(w.to.offset) : ''} ${w.to.state} ${objectName(index, w.slot!)}`
}

function targetHtml(index: HeapIndex, w: PointingWord): Html {
  if (w.to.kind !== 'object') return html`<span class="dim">${w.to.kind}</span> ${w.to.label}`
  return html`<a href="${objectHref(Number(w.to.address))}"><code>${w.to.address}</code></a>${w.to.offset ? offset(w.to.offset) : ''} ${w.to.state === 'live' ? '' : html`<span class="warn">${w.to.state}</span> `}${objectNameWithTier(index, w.slot!)}`
}
