/**
 * The top-level arguments of a demangled template argument list (`long (long), f()::{lambda(long)#1}`
 * → [`long (long)`, `f()::{lambda(long)#1}`]), or null when its brackets do not balance.
 */
export function templateArguments(args: string): string[] | null {
  const out: string[] = []
  let depth = 0
  let from = 0
  for (let i = 0; i < args.length; i++) {
    const c = args[i]
    if (c === '<' || c === '(' || c === '[' || c === '{') depth++
    else if (c === '>' || c === ')' || c === ']' || c === '}') depth--
    else if (c === ',' && depth === 0) {
      out.push(args.slice(from, i).trim())
      from = i + 1
    }
    if (depth < 0) return null
  }
  if (depth !== 0) return null
  out.push(args.slice(from).trim())
  return out.some(a => a === '') ? null : out
}
