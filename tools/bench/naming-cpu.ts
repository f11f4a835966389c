// node dist/tools/bench/naming-cpu.js CORE [RUNS]: the naming tiers' own CPU, tier by tier, apart
// from the rest of the analysis. Models the heap and finds the vtable names and the roots once,
// then names the heap RUNS times (default 2) as the naming worker does (src/naming/naming-worker.ts:
// the core opened again with its 16 KiB read blocks, the program loaded again, every tier), each
// time from the vtable names, and prints each run's CPU per tier, the least of each, and a digest
// of the names (every slot's name and kind, its tier, the conflicts), which a change that must not
// change a name keeps. In one process, so alternate two builds' runs on a shared machine. Build first.
import crypto from 'node:crypto'
import {openProgram} from '../../src/program/open-program.js'
import {Program} from '../../src/program/program.js'
import {Core} from '../../src/core/core.js'
import {modelHeap} from '../../src/allocators.js'
import {heapObjects, HeapObjects} from '../../src/heap/objects.js'
import {LIVE} from '../../src/heap/states.js'
import {liveFirstWords} from '../../src/heap/first-words.js'
import {nameObjects} from '../../src/graph/object-types.js'
import {TypeNamer} from '../../src/graph/types.js'
import {findRoots} from '../../src/graph/scan.js'
import {fitsRequest} from '../../src/heap/request-fit.js'
import {nameHeap, type NamingResult} from '../../src/naming/name-heap.js'
import {RECOGNISERS} from '../../src/naming/recognisers.js'
import type {Recogniser} from '../../src/naming/recogniser.js'

const [corePath, runsArg = '2'] = process.argv.slice(2)
const runs = Number(runsArg)
if (!corePath || !(runs >= 1)) {
  console.error('usage: node dist/tools/bench/naming-cpu.js CORE [RUNS]')
  process.exit(2)
}
const program = openProgram(corePath, {})
const heap = modelHeap(program)
const vtableTypes = nameObjects(liveFirstWords(program.core.memory, heap), new TypeNamer(program))
const roots = findRoots(program, heap).set.ranges
const {spans, pageSize, state} = heapObjects(heap)
program.core.close()

const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since)
  return Math.round((u.user + u.system) / 1000)
}
const least = new Map<string, number>()
let last: NamingResult | undefined
for (let run = 0; run < runs; run++) {
  const took: Array<[string, number]> = []
  const timed: Recogniser[] = RECOGNISERS.map(r => ({
    ...r,
    run(ctx) {
      const since = process.cpuUsage()
      r.run(ctx)
      took.push([r.label, cpuMs(since)])
    },
  }))
  const core = Core.open(corePath, undefined, 1 << 14)
  try {
    const again = Program.load(core, program.options)
    const since = process.cpuUsage()
    last = nameHeap(again, new HeapObjects(spans, pageSize, () => state), LIVE, new TypeNamer(again), roots, {...vtableTypes, typeOf: vtableTypes.typeOf.slice(), names: [...vtableTypes.names]}, fitsRequest(heap.requestFit()), timed)
    took.push(['all tiers', cpuMs(since)])
  } finally {
    core.close()
  }
  console.log(`run ${run + 1}: ${took.map(([label, ms]) => `${label} ${ms}`).join(', ')} ms of CPU`)
  for (const [label, ms] of took) least.set(label, Math.min(least.get(label) ?? Infinity, ms))
}
console.log(`least: ${[...least].map(([label, ms]) => `${label} ${ms}`).join(', ')} ms of CPU`)

// The digest: each slot's name and kind by string (ids follow the order names are first given).
const {names, notes} = last!
const parts = names.parts()
const digest = crypto.createHash('sha256')
for (let slot = 0; slot < parts.via.length; slot++) {
  const id = parts.typeOf[slot]!
  digest.update(id === 0 ? '\n' : `${parts.names[id - 1]}\t${parts.kinds[id - 1]}\t${parts.via[slot]}\n`)
}
digest.update(JSON.stringify([parts.conflictCount, [...parts.conflicts].map(c => JSON.stringify(c)).sort()]))
console.log(`names digest ${digest.digest('hex').slice(0, 16)} (${parts.conflictCount} conflicts)`)
for (const note of notes) console.log(note)
