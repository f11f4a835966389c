// Writes test/file-weights.json, the seconds each test file took in a measured run, from vitest's
// JSON report of that run: `node dist/tools/test/file-weights.js REPORT.json`. The suite's sequencer
// (test/sequencer.ts) starts the files longest first from it, so that the forks end together.
import fs from 'node:fs'
import path from 'node:path'
import {root} from '../project-root.js'

interface Report {
  testResults: Array<{name: string; startTime: number; endTime: number}>
}

const report = process.argv[2]
if (!report) {
  console.error('usage: file-weights.js VITEST_JSON_REPORT')
  process.exit(1)
}
const {testResults} = JSON.parse(fs.readFileSync(report, 'utf8')) as Report
const weights: Record<string, number> = {}
for (const r of testResults.slice().sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime) || a.name.localeCompare(b.name))) {
  // The report names files by the path of the checkout that ran them: kept from test/ on.
  const file = r.name.slice(r.name.lastIndexOf('/test/') + 1)
  weights[file] = Math.round((r.endTime - r.startTime) / 100) / 10
}
const out = path.join(root, 'test', 'file-weights.json')
fs.writeFileSync(out, JSON.stringify(weights, null, 1) + '\n')
console.log(`${out}: ${Object.keys(weights).length} files`)
