/** What the shell completes from: its commands with their flags, and the types of the open index. */
export interface CompletionSource {
  commands: Array<{id: string; flags: Array<{name: string; takesValue: boolean; options?: readonly string[]}>}>
  /** Words the shell itself understands (help, exit, quit). */
  builtins: string[]
  types: readonly string[]
}

/**
 * readline's completer: the candidates for the word under the cursor (the line's end), and that
 * word. Command names first; then a command's flags (`--…`), a flag's allowed values, and type
 * names wherever a word can be one (a flag about types, or a word that is no address and no path).
 */
export function completeLine(line: string, source: CompletionSource): [string[], string] {
  const partial = /(\S*)$/.exec(line)![1]!
  const before = line.slice(0, line.length - partial.length).trim()
  const words = before === '' ? [] : before.split(/\s+/)
  const hits = (candidates: readonly string[]) => [candidates.filter(c => c.startsWith(partial)).sort(), partial] as [string[], string]
  // A type name with blanks or quotes completes quoted, as the line's words are split (shell-words.ts).
  const typeHits = () => {
    const typed = partial.startsWith("'") ? partial.slice(1) : partial
    const quote = (t: string) => (/[\s'"\\]/.test(t) ? `'${t.replaceAll("'", "'\\''")}'` : t)
    return [source.types.filter(t => t.startsWith(typed)).sort().map(quote), partial] as [string[], string]
  }
  const ids = source.commands.map(c => c.id)
  if (words.length === 0) return hits([...ids, ...source.builtins])
  if (words[0] === 'help') return words.length === 1 ? hits(ids) : [[], partial]
  const command = source.commands.find(c => c.id === words[0])
  if (!command) return [[], partial]
  const previous = words[words.length - 1]!
  const flag = previous.startsWith('--') ? command.flags.find(f => `--${f.name}` === previous) : undefined
  if (flag?.takesValue) {
    if (flag.options) return hits(flag.options)
    return /type/.test(flag.name) ? typeHits() : [[], partial]
  }
  if (partial.startsWith('-')) return hits(command.flags.map(f => `--${f.name}`))
  // An address (0x…, digits) or a path (./core, /tmp/…, core.1234) is not a type name.
  if (partial === '' || /^[0-9./~]/.test(partial) || partial.includes('/')) return [[], partial]
  return typeHits()
}
