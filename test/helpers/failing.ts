/**
 * The indices in [0, n) where `ok` is false, the first `limit` of them: for checks of every object
 * or every edge of a fixture (tens of thousands each, thirty fixtures), where an expect an element
 * costs microseconds of the runner's bookkeeping and a message string each. One
 * `expect(failing(...)).toEqual([])` checks the same and names what failed.
 */
export function failing(n: number, ok: (i: number) => boolean, limit = 20): number[] {
  const out: number[] = []
  for (let i = 0; i < n && out.length < limit; i++) if (!ok(i)) out.push(i)
  return out
}
