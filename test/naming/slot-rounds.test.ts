import {describe, expect, it} from 'vitest'
import {SlotRounds} from '../../src/naming/dwarf/slot-rounds.js'

// The DWARF flow's work list: each round in slot (address) order, what a round adds waiting for
// the next one. Plain data in, order out: no core is needed to tell the order.
describe('SlotRounds', () => {
  it('visits a round by slot, items of one slot in the order added, each with the next item\'s address', () => {
    const rounds = new SlotRounds<string>()
    rounds.push(300, 'c', 3)
    rounds.push(100, 'a', 1)
    rounds.push(308, 'c2', 3, 2)
    rounds.push(200, 'b', 2)
    const seen: Array<[number, string, number, number, number]> = []
    expect(rounds.round((addr, type, count, slot, next) => (seen.push([addr, type, count, slot, next]), true))).toBe(true)
    expect(seen).toEqual([[100, 'a', 1, 1, 200], [200, 'b', 1, 2, 300], [300, 'c', 1, 3, 308], [308, 'c2', 2, 3, Infinity]])
    expect(rounds.pending).toBe(0)
  })

  it('keeps what a round adds for the next round, and stops where the visit says so', () => {
    const rounds = new SlotRounds<number>()
    rounds.push(50, 0, 5)
    rounds.push(10, 0, 1)
    const order: number[] = []
    rounds.round(addr => {
      order.push(addr)
      if (addr === 10) rounds.push(5, 1, 0)
      return true
    })
    expect(order).toEqual([10, 50])
    expect(rounds.pending).toBe(1)
    rounds.push(70, 1, 7)
    rounds.push(60, 1, 6)
    const second: number[] = []
    expect(rounds.round(addr => (second.push(addr), addr !== 60))).toBe(false)
    expect(second).toEqual([5, 60])
  })
})
