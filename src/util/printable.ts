/**
 * Text read from a core or its module files (module paths from NT_FILE, the process's name and
 * arguments, symbol and type names, strings in memory), and paths the user gave, are bytes anyone
 * could have chosen. Written raw to a terminal, ESC, CSI and OSC sequences retitle the window,
 * make links or erase output; CR and LF forge whole lines ("Warnings (0)"); C1 bytes are the same
 * sequences in one byte, and the Unicode line separators and bidi overrides break or reorder the
 * line in viewers. Everything that shows such text passes it through `printable` first.
 *
 * Two layers, on purpose: `printable` where such a string enters text output (the formatters,
 * the one-line notes on stderr) turns every control character into a visible escape, and
 * `terminalSafe` where text leaves for the terminal (TomaCommand's log and logJson; the one-line
 * notes on stderr are printable whole) neutralises whatever control is still there apart from
 * the colour codes toma writes itself. The first keeps the text readable and cannot be done
 * later (by the time a report is assembled, a newline from the core looks like one of ours);
 * the second means a source the first missed can still forge a line, but never retitle, erase
 * or link, and it is what keeps `--json` (DEL and C1, which JSON leaves raw) off the terminal.
 */

/** Every control character: C0 (LF and TAB too), DEL, C1, the line and paragraph separators, the bidi embeddings, overrides and isolates. */
const CONTROLS = String.raw`\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069`
/** The same but LF and TAB, which a block of lines holds as its own. */
const CONTROLS_BUT_LINES = String.raw`\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069`
const UNPRINTABLE = new RegExp(`[${CONTROLS}]`, 'g')
const UNPRINTABLE_BUT_LINES = new RegExp(`[${CONTROLS_BUT_LINES}]`, 'g')

/** `\x1b` for a character up to U+00FF, `\u2028` above: what C, Python and JavaScript would write. */
function escape(c: string): string {
  const code = c.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/** The text with every control character written as a visible escape: one line, shown as it is. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escape)
}

/** `printable` for a block of lines: LF and TAB kept (the lines' own, each already printable), every other control escaped. */
export function printableBlock(text: string): string {
  return text.replace(UNPRINTABLE_BUT_LINES, escape)
}

/**
 * A value for a text formatter: every string in it (in arrays and plain objects, at any depth)
 * made printable. The value itself when nothing needed it, so the common case copies nothing.
 * Formatters take the data their `--json` form prints (which must stay raw: JSON escapes by
 * itself) and make it printable on entry, so no field they show can be forgotten.
 */
export function printableData<T>(value: T): T {
  if (typeof value === 'string') return printable(value) as T
  if (Array.isArray(value)) {
    let out: unknown[] | null = null
    for (let i = 0; i < value.length; i++) {
      const v = printableData(value[i])
      if (v !== value[i]) (out ??= value.slice())[i] = v
    }
    return (out ?? value) as T
  }
  if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) return value
    let out: Record<string, unknown> | null = null
    for (const [k, v] of Object.entries(value)) {
      const p = printableData(v)
      if (p !== v) (out ??= {...(value as Record<string, unknown>)})[k] = p
    }
    return (out ?? value) as T
  }
  return value
}

/**
 * The last guard before the terminal: every control character but LF and TAB, and so every
 * escape sequence but the colour codes chalk writes (SGR, `ESC [ digits;… m`, of the attributes
 * toma uses: reset, bold, dim, italic, underline, their ends, foreground colours; not 8,
 * concealed), made harmless by writing the control as a `\u001b` escape. Those are JSON's own,
 * so a JSON document through it stays valid and means the same: JSON.stringify escapes C0 but
 * leaves DEL, C1 and the separators raw, and for `--json` this guard is the only layer.
 */
export function terminalSafe(text: string): string {
  return text.search(UNPRINTABLE_BUT_LINES) < 0 ? text : text.replace(TERMINAL_SEQUENCE, neutralise)
}

const TERMINAL_SEQUENCE = new RegExp(String.raw`\x1b\[([0-9;]*)m|[${CONTROLS_BUT_LINES}]`, 'g')
const CHALK_SGR = new Set(['', '0', '1', '2', '3', '4', '22', '23', '24', '39', '30', '31', '32', '33', '34', '35', '36', '37', '90', '91', '92', '93', '94', '95', '96', '97'])

/** A match holds one control character, its first: an SGR's ESC, or the control itself. */
function neutralise(match: string, sgr: string | undefined): string {
  if (sgr !== undefined && sgr.split(';').every(p => CHALK_SGR.has(p))) return match
  return `\\u${match.charCodeAt(0).toString(16).padStart(4, '0')}${match.slice(1)}`
}
