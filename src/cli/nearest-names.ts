// Suggestions for a mistyped name (a command, a type): kept apart from command-not-found.ts, whose
// oclif plugin a command's own module must not load (the fast path, docs/ARCHITECTURE.md "Start-up design").

/** The known name fewest single-character edits away from the given one (Levenshtein distance). */
export function closest(given: string, known: string[]): string | undefined {
  return nearest(given, known, 1)[0]
}

/** Up to `count` known names, fewest edits away from the given one first (the first known on ties). */
export function nearest(given: string, known: readonly string[], count: number): string[] {
  return known
    .map((name, at) => ({name, at, d: editDistance(given, name)}))
    .sort((a, b) => a.d - b.d || a.at - b.at)
    .slice(0, count)
    .map(n => n.name)
}

function editDistance(a: string, b: string): number {
  let row = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}
