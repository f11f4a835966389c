import {describe, expect, it} from 'vitest'
import {expectTier, libcxxTruth, useNamesdemo, LAYOUT_KINDS, expectSharedPointee} from './namesdemo.js'

// Issue 30, tier 1 with libc++: namesdemo built with clang++ -stdlib=libc++ (Debian's clang 14),
// stripped (fixtures/namesdemo-libcxx). libc++'s string (long mode: {capacity | 1, size, data}),
// tree ({begin node, end node {left = root}, size}; nodes {left, right, parent, is_black}) and deque
// (a __split_buffer map of 4 KiB blocks) have layouts of their own; its vector, list and unordered
// containers are tested by the same proofs as libstdc++'s. TCMalloc loads libstdc++ too, so both
// libraries' layouts are tried on this heap: the test checks that no libstdc++ shape misnames it.
// Every expected value is what the process recorded about itself.

// libc++'s own symbols (its vtables, std::function's managers) name what leads to the pool and the
// shared_ptr's pointee: the fixture carries the libc++ that ran (fixtures/sysroots/bookworm, by
// build-id), so these tests run wherever Debian's libc++1 has moved on or is not installed.
describe('std-layout, pool and c-string on namesdemo built with libc++, stripped', () => {
  const index = useNamesdemo('libcxx')

  it('names every container block the truth lists and nothing else (recall and precision 100 %)', () => {
    const counts = expectTier(index(), LAYOUT_KINDS, 'layout', libcxxTruth)
    for (const k of LAYOUT_KINDS) expect(counts[k], k).toBe(libcxxTruth.blocks.filter(b => b.kind === k).length)
    for (const k of LAYOUT_KINDS) expect(counts[k], k).toBeGreaterThan(0)
  })

  it('names the C strings and the pool, and no std::string buffer as a C string', () => {
    expect(expectTier(index(), ['C string'], 'content', libcxxTruth)['C string']).toBe(libcxxTruth.blocks.filter(b => b.kind === 'C string').length)
    expect(expectTier(index(), ['pool'], 'pool', libcxxTruth).pool).toBe(1)
    expect(index().meta.naming.conflicts.count).toBe(0)
  })

  it('names the plain struct shared_ptr(new T) owns from libc++\'s __shared_ptr_pointer', () => expectSharedPointee(index(), libcxxTruth))
})
