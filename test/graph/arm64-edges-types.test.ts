import {afterAll, expect, it} from 'vitest'
import {modelHeap} from '../../src/allocators.js'
import {outEdges} from '../../src/graph/csr.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {TypeNamer} from '../../src/graph/types.js'
import {objectAt} from '../../src/heap/objects.js'
import {LIVE} from '../../src/heap/states.js'
import {ARM64_64K_FIXTURE, ARM64_FIXTURE, ARM64_KERNEL_FIXTURE, ARM64_PAC_KERNEL_FIXTURE, ARM64_PIE_FIXTURE, openArm64Fixture} from '../helpers/arm64-fixture.js'
import {edgeOffsetsOf} from '../helpers/edge-offsets.js'
import {addr} from '../helpers/fixture-core.js'
import {naiveEdges} from '../helpers/naive-edges.js'

const opened: Array<Awaited<ReturnType<typeof openArm64Fixture>>> = []
afterAll(() => opened.forEach(o => o.core.close()))

// Issue 54: above the heap layer nothing changes on aarch64, so the edges and the vtable types are
// what heapdemo recorded of itself (each object's class and every pointer field, with the offset
// it points at), on each kind of arm64 core: QEMU user mode's (no-pie, PIE, 64 KiB pages), the
// kernel's in an arm64 VM (a PIE, modules from NT_FILE) and the kernel's of the build whose return
// addresses are signed.
it.each([
  {what: 'QEMU user, no-pie', dir: ARM64_FIXTURE},
  {what: 'QEMU user, PIE', dir: ARM64_PIE_FIXTURE},
  {what: 'QEMU user, 64 KiB pages', dir: ARM64_64K_FIXTURE},
  {what: 'the kernel\'s core', dir: ARM64_KERNEL_FIXTURE},
  {what: 'the kernel\'s core, -mbranch-protection', dir: ARM64_PAC_KERNEL_FIXTURE},
])('aarch64, $what: every recorded pointer is an edge with its offsets, the edges equal a word-by-word scan, every class is its vtable\'s', async ({dir}) => {
  const f = await openArm64Fixture(dir)
  opened.push(f)
  const {program, truth, core} = f
  const heap = modelHeap(program)
  const g = scanHeapGraph(program, heap)
  expect(g.warnings.list).toEqual([])
  const off = edgeOffsetsOf(core.memory, heap, g)
  const slotOf = (a: string) => {
    const o = objectAt(heap, addr(a))
    expect(o?.start, `${a} starts an object`).toBe(addr(a))
    expect(heap.state[o!.index], `${a} is live`).toBe(LIVE)
    return o!.index
  }
  let pointers = 0
  for (const o of truth.objects) {
    const {start, end} = outEdges(g, slotOf(o.address))
    const got = new Set<string>()
    for (let e = start; e < end; e++) got.add(`${off.offset[e]}->${g.outTo[e]}+${off.toOffset[e]}`)
    for (const p of o.pointers) {
      expect(got, `${o.name}+${p.offset} -> ${p.to}+${p.toOffset}`).toContain(`${p.offset}->${slotOf(p.to)}+${p.toOffset}`)
      pointers++
    }
  }
  expect(pointers).toBeGreaterThan(10)
  const fast: string[] = []
  for (let o = 0; o < g.objectCount; o++) for (let e = g.outStart[o]!; e < g.outStart[o + 1]!; e++) fast.push(`${o}+${off.offset[e]}->${g.outTo[e]}+${off.toOffset[e]}`)
  expect(fast).toEqual(naiveEdges(program, heap))
  // Types: the class heapdemo recorded for each object (null for plain buffers) is the one its first word's vtable names.
  const namer = new TypeNamer(program)
  const classes = truth.objects.filter(o => o.class !== null)
  expect(new Set(classes.map(o => o.class))).toEqual(new Set(['app::Order', 'app::Customer', 'app::Box<int>', 'app::Widget', 'app::Node', 'app::Inventory', 'app::Registry', 'app::Session']))
  for (const o of truth.objects) expect(namer.classOfVtablePointer(core.memory.readU64(addr(o.address))!), `${o.name} at ${o.address}`).toBe(o.class)
})
