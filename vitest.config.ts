import os from 'node:os'
import {defineConfig} from 'vitest/config'
import {LongestFirst} from './test/sequencer.js'

/**
 * One test file per CPU. vitest's own default in a run is one fewer than the CPUs (so that its main
 * process keeps one), which on a 2-core machine is one fork: the files ran one after another while
 * the second CPU idled (the suite's user CPU time was 1.1 times its wall time). The main process
 * does little but collect results, and most of our CLI tests wait on a child toma process anyway.
 */
const FORKS = os.availableParallelism()

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/yield-between-tests.ts', 'test/cpu-per-file.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: FORKS,
    minWorkers: FORKS,
    // Longest files first (test/sequencer.ts), so that the two forks end together.
    sequence: {sequencer: LongestFirst},
  },
})
