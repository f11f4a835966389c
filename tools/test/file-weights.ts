// Writes test/file-weights.json, the seconds each test file costs, for the suite's sequencer
// (test/sequencer.ts), which starts the files longest first from it so that the forks end together:
//   node dist/tools/test/file-weights.js REPORT.json     vitest's JSON report of a run: each file's wall time
//   node dist/tools/test/file-weights.js CPU.jsonl       TOMA_TEST_CPU_LOG of a run (test/cpu-per-file.ts):
//                                                       each file's CPU seconds, its toma children's included
// The CPU log is the better weight on a shared machine: a file's wall time there is stretched by
// whatever else runs; its CPU is what it takes of the two forks.
import fs from 'node:fs'
import path from 'node:path'
import {root} from '../project-root.js'

interface Report {
  testResults: Array<{name: string; startTime: number; endTime: number}>
}

const input = process.argv[2]
if (!input) {
  console.error('usage: file-weights.js VITEST_JSON_REPORT | TOMA_TEST_CPU_LOG.jsonl')
  process.exit(1)
}
const text = fs.readFileSync(input, 'utf8')
const seconds: Array<{name: string; seconds: number}> = input.endsWith('.jsonl')
  ? text.split('\n').filter(l => l.trim()).map(l => JSON.parse(l) as {file: string; cpu: number}).map(r => ({name: r.file, seconds: r.cpu}))
  : (JSON.parse(text) as Report).testResults.map(r => ({name: r.name, seconds: (r.endTime - r.startTime) / 1000}))
const weights: Record<string, number> = {}
for (const r of seconds.sort((a, b) => b.seconds - a.seconds || a.name.localeCompare(b.name))) {
  // The report names files by the path of the checkout that ran them: kept from test/ on.
  const file = r.name.slice(r.name.lastIndexOf('/test/') + 1)
  weights[file] = Math.round(r.seconds * 10) / 10
}
const out = path.join(root, 'test', 'file-weights.json')
fs.writeFileSync(out, JSON.stringify(weights, null, 1) + '\n')
console.log(`${out}: ${Object.keys(weights).length} files`)
