import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {analyzeNamesdemo, expectTier, namedShare, truth, useNamesdemo, LAYOUT_KINDS, expectSharedPointee} from './namesdemo.js'
import {RECOGNISERS} from '../../src/naming/recognisers.js'
import {stdLayout, stdLayoutKeeping} from '../../src/naming/std-layout/recogniser.js'

// Issue 30, tier 1: libstdc++'s containers named from their owners' words, on a stripped
// executable with no debug file. Every expected value is what namesdemo recorded about itself
// (truth.json, taken through gperftools' malloc hooks and the containers' own interfaces).


describe('std-layout on namesdemo, stripped, no debug file', () => {
  const index = useNamesdemo('stripped')

  it('names every container block the truth lists, with its kind, and nothing else (recall and precision 100 %)', () => {
    const counts = expectTier(index(), LAYOUT_KINDS, 'layout')
    // Every kind is present in the fixture (a kind with no block would test nothing).
    for (const k of LAYOUT_KINDS) expect(counts[k], k).toBe(truth.blocks.filter(b => b.kind === k).length)
    for (const k of LAYOUT_KINDS) expect(counts[k], k).toBeGreaterThan(0)
  })

  it('leaves the std::function target unnamed without symbols, and gives no conflicting names', () => {
    const target = truth.blocks.find(b => b.kind === 'std::function target')!
    const o = index().objectAt(Number(BigInt(target.address)))!
    expect(index().type(o.index)).toBeNull()
    expect(index().meta.naming.conflicts.count).toBe(0)
    expect(index().meta.naming.warnings).toEqual([])
  })

  it('names the plain struct shared_ptr(new T) owns from its control block\'s type', () => expectSharedPointee(index(), truth))

  it('the vtable tier still names the shared_ptr control blocks and the polymorphic objects', () => {
    for (const b of truth.blocks.filter(t => t.kind === 'object' && (t.name.startsWith('std::_Sp_counted') || t.name === 'app::Circle' || t.name === 'app::Square'))) {
      const o = index().objectAt(Number(BigInt(b.address)))!
      expect(index().type(o.index), b.address).toBe(b.name)
      expect(index().via(o.index)).toBe('vtable')
    }
  })

  it('names the same with its string and vector words kept or read a second time', async () => {
    // The tier reads every owner word once and keeps the words that may hold a string or a vector
    // for after the linked containers; past its limit it reads the rest a second time. Kept one,
    // every string and vector of the fixture is found in the second read: the names must not move.
    const second = await analyzeNamesdemo('stripped', {workers: 1, recognisers: RECOGNISERS.map(r => (r === stdLayout ? stdLayoutKeeping(1) : r))})
    try {
      const contiguous = truth.blocks.filter(b => b.kind === 'std::string buffer' || b.kind === 'std::vector body')
      expect(contiguous.length).toBeGreaterThan(1)
      let slots = 0
      index().objects.forEachObject(id => {
        slots++
        expect(second.index.type(id), `slot ${id}`).toBe(index().type(id))
        expect(second.index.via(id), `slot ${id}`).toBe(index().via(id))
      }, 0)
      expect(slots).toBeGreaterThan(contiguous.length)
    } finally {
      second.index.file.close()
      fs.rmSync(second.work, {recursive: true, force: true})
    }
  })

  it('names more of the live bytes than the vtable tier alone', () => {
    const {live, named} = namedShare(index())
    let vtable = 0
    index().objects.forEachObject((id, _s, size) => {
      if (index().via(id) === 'vtable') vtable += size
    }, 0)
    expect(named).toBeGreaterThan(vtable)
    expect(named).toBeLessThanOrEqual(live)
  })
})

describe('std-layout on namesdemo with the -g build (symbols)', () => {
  const index = useNamesdemo('symbols')

  it('names the std::function target by its manager\'s symbol: the lambda type the process names', () => {
    // Its kind has no generic name: the truth's (the process's typeid, demangled) is required. The
    // -g build's DWARF names most containers' blocks first (with their element types): together
    // the two tiers name every block of the truth, and nothing else.
    const counts = expectTier(index(), [...LAYOUT_KINDS, 'std::function target'], ['layout', 'debug-info'])
    expect(counts['std::function target']).toBe(1)
  })
})
