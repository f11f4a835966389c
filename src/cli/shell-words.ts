/**
 * A shell line split into words as a POSIX shell splits a simple command: blanks separate words,
 * '…' keeps everything literally, "…" keeps all but \" and \\, a backslash outside quotes keeps
 * the next character. So a line pasted from a terminal command means what it meant there.
 */
export function shellWords(line: string): {words: string[]} | {problem: string} {
  const words: string[] = []
  let word: string | null = null
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word)
      word = null
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) return {problem: 'unterminated \' quote'}
      word = (word ?? '') + line.slice(i + 1, end)
      i = end
    } else if (c === '"') {
      let s = ''
      let j = i + 1
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && (line[j + 1] === '"' || line[j + 1] === '\\')) j++
        s += line[j]
      }
      if (j >= line.length) return {problem: 'unterminated " quote'}
      word = (word ?? '') + s
      i = j
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i]
    } else {
      word = (word ?? '') + c
    }
  }
  if (word !== null) words.push(word)
  return {words}
}
