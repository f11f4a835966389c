import {grouped} from '../../util/grouped.js'
import {printableBlock} from '../../util/printable.js'
/** Markup that is already safe to emit (built by `html`, or trusted text such as the page's own script). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

/**
 * Text for HTML: every character that could open a tag, end an attribute or start an entity is
 * escaped, and so is every control character but LF and TAB (printableBlock: a bidi override
 * from a core's names would reorder the line it is in; the others have no place in HTML).
 */
export function escapeHtml(text: string): string {
  return printableBlock(text).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!)
}

/** Markup the report itself wrote (styles, script, SVG numbers): emitted as is. */
export function raw(text: string): Html {
  return new Html(text)
}

type Part = Html | string | number | null | undefined | false | readonly Part[]

function emit(part: Part): string {
  if (part === null || part === undefined || part === false) return ''
  if (part instanceof Html) return part.text
  if (Array.isArray(part)) return part.map(emit).join('')
  return escapeHtml(String(part))
}

/**
 * A template tag that escapes every interpolated value unless it is already Html: the names read
 * from a core (types, symbols, module paths) can hold `<`, `&` or quotes (`app::Box<int>`), and
 * escaping by default means no formatter can forget it.
 */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!
  values.forEach((v, i) => (out += emit(v) + strings[i + 1]!))
  return new Html(out)
}

/** A number as people read it in the report (thousands separated). */
export function num(n: number): string {
  return grouped(n)
}
