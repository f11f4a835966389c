import {describe, expect, it} from 'vitest'
import {expectTier, truth, useNamesdemo} from './namesdemo.js'

// Issue 30, tier 4: a pool (one malloc'd chunk carved into app::Events at a fixed stride, one slot
// in five left unconstructed), named from the vtable words inside it, on the stripped executable.
// The stride and the count are what namesdemo recorded.

describe('pool on namesdemo, stripped, no debug file', () => {
  const index = useNamesdemo('stripped')

  it('names the pool, whose first slot the vtable tier took for one app::Event, and nothing else', () => {
    const counts = expectTier(index(), ['pool'], 'pool')
    expect(counts.pool).toBe(1)
  })

  it('says how many objects it holds, at which stride', () => {
    const pool = truth.blocks.find(b => b.kind === 'pool')!
    const lines = index().meta.naming.notes.filter(n => n.startsWith('[pool] pool of'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`pool of app::Event at ${pool.address}`)
    expect(lines[0]).toContain(`${truth.poolObjects} objects at stride ${truth.poolStride}, the first at +0`)
  })
})
