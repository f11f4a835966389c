import {expect, it} from 'vitest'
import {resetPeakMemory} from '../../src/util/peak-memory.js'
import {collectGarbage} from '../../src/store/collect-garbage.js'

// The peak an analysis reports is its own, also in the shell, where one process runs command after
// command: the peak is started afresh before each analysis.
it('starts the peak afresh: once what made it is freed, the peak read after a reset is below it', () => {
  const MIB = 2 ** 20
  const peak = () => process.resourceUsage().maxRSS * 1024
  let block: Buffer | null = Buffer.allocUnsafeSlow(256 * MIB)
  block.fill(1) // resident, page by page
  const withBlock = peak()
  expect(withBlock).toBeGreaterThan(256 * MIB)
  block = null
  collectGarbage()
  // Without the reset, the peak stays where the block took it.
  expect(peak()).toBeGreaterThanOrEqual(withBlock)
  expect(resetPeakMemory()).toBe(true)
  expect(peak()).toBeLessThan(withBlock - 128 * MIB)
})
