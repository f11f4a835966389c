import {describe, expect, it} from 'vitest'
import {expectTier, truth, useNamesdemo} from './namesdemo.js'

// Issue 30: C strings by their content (strdup'd and malloc(n + 1)'d text, and the environment
// strings setenv put on the heap), on the stripped executable. The truth is namesdemo's record.

describe('c-string on namesdemo, stripped, no debug file', () => {
  const index = useNamesdemo('stripped')

  it('names every C string the truth lists and nothing else (recall and precision 100 %)', () => {
    const counts = expectTier(index(), ['C string'], 'content')
    expect(counts['C string']).toBe(truth.blocks.filter(b => b.kind === 'C string').length)
    // Both sources are there: the program's own strings and the environment's.
    expect(truth.blocks.some(b => b.kind === 'C string' && b.container === 'environ')).toBe(true)
    expect(truth.blocks.some(b => b.kind === 'C string' && b.container === 'g_cstrings')).toBe(true)
  })

  it('leaves the std::string buffers (text and a NUL too) to the layout tier', () => {
    for (const b of truth.blocks.filter(t => t.kind === 'std::string buffer')) {
      const o = index().objectAt(Number(BigInt(b.address)))!
      expect(index().via(o.index)).toBe('layout')
    }
  })
})
