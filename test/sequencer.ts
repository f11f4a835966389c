import fs from 'node:fs'
import path from 'node:path'
import {BaseSequencer, type TestSpecification} from 'vitest/node'

/**
 * Starts the test files longest first, by the seconds each took in a measured run
 * (test/file-weights.json, written by tools/test/file-weights.ts from a TOMA_TEST_CPU_LOG or vitest's JSON report). Two
 * forks take the files in this order as each frees up: with the long files first, the forks end
 * within a short file of each other, where a long file started last leaves the other CPU idle
 * while it runs. vitest's own order uses the durations of earlier runs on the machine, and on a
 * fresh one (CI) the files' sizes. A file the list does not have (a new one) goes first: it may be
 * long, and a short one first costs little.
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const weights = JSON.parse(fs.readFileSync(path.join(root, 'test', 'file-weights.json'), 'utf8')) as Record<string, number>
    const weight = (f: TestSpecification) => weights[path.relative(root, f.moduleId)] ?? Infinity
    return [...files].sort((a, b) => weight(b) - weight(a) || a.moduleId.localeCompare(b.moduleId))
  }
}
