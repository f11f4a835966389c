// node dist/tools/bench/fresh-memory.js [GIB]: what this machine charges for memory a process
// touches for the first time, against the same memory written again. GIB buffers of 1 GiB (default
// 8) are allocated and filled one after the other, all kept, then each filled once more; every
// fill is timed. Prints JSON: the milliseconds of each first fill and each second one.
//
// Why: on a VM whose memory the host backs only when the guest touches it (and takes back when it
// is freed), a page's first write can cost far more than writing memory in hand, and how much more
// depends on the host, not on the program. An analysis touches about its core's size in the page
// cache, its index's in dirty pages and its peak memory: where this tool's first fills are slow and
// uneven, the time per GiB of two cores of different sizes cannot be compared on that machine.
// Run it with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 too (toma's own setting: huge pages where the
// kernel gives them). Needs GIB GiB of free memory; refuses more than 80 % of the machine's.
import os from 'node:os'
import {performance} from 'node:perf_hooks'

const GIB = 2 ** 30
const gib = Number(process.argv[2] ?? 8)
if (!Number.isInteger(gib) || gib < 1 || gib * GIB > os.totalmem() * 0.8) {
  console.error(`usage: node dist/tools/bench/fresh-memory.js [GIB]: a whole number of GiB from 1 to 80 % of this machine's ${Math.floor(os.totalmem() / GIB)} GiB`)
  process.exit(2)
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const buffers: Buffer[] = []
const firstMs: number[] = []
for (let i = 0; i < gib; i++) {
  const t = performance.now()
  const b = Buffer.allocUnsafeSlow(GIB)
  b.fill(i + 1)
  firstMs.push(Math.round(performance.now() - t))
  buffers.push(b)
}
const againMs: number[] = []
for (const [i, b] of buffers.entries()) {
  const t = performance.now()
  b.fill(i + 2)
  againMs.push(Math.round(performance.now() - t))
}
console.log(JSON.stringify({gib, glibcTunables: process.env.GLIBC_TUNABLES ?? null, firstMs, againMs, medianFirstMs: median(firstMs), medianAgainMs: median(againMs)}))
