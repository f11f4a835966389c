import fs from 'node:fs'
import {describe, expect, it} from 'vitest'
import {BY_GROUP, BY_VIRTUAL_ROOT, NOT_IN_TREE, copyPredecessors, dominatorTree, retainedSizes, type PredecessorCopy} from '../../src/dominators/dominators.js'
import {dominatorChildren} from '../../src/dominators/dominator-children.js'
import {subtreeSumsByChildren, treeObjectsCounted} from '../../src/dominators/retained-by-children.js'
import {groupOfIdom} from '../../src/dominators/dominator-ids.js'
import {balancedSplit, mergedWalks, walkDominatorTree} from '../../src/dominators/dominator-walk.js'
import {nameObjects} from '../../src/graph/object-types.js'
import {TypeNamer} from '../../src/graph/types.js'
import {FROM_ROOT, UNREACHED, reachableFromParents, shortestPathParents} from '../../src/graph/reachability.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {modelHeap} from '../../src/allocators.js'
import {LIVE} from '../../src/heap/states.js'
import {fixtureIndex, openFixture} from '../helpers/fixture-core.js'
import {failing} from '../helpers/failing.js'
import {testTemp} from '../helpers/test-temp.js'
import type {FileArray} from '../../src/util/file-array.js'

/** A small seeded generator (mulberry32), so the sampled objects are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe.each(fixtureIndex().map(f => [f.id] as const))('dominators on %s', id => {
  it('equal Cooper–Harvey–Kennedy, retained sizes equal the brute-force definition, paths are real edges', async () => {
    const {program} = await openFixture(id)
    const heap = modelHeap(program)
    const g = scanHeapGraph(program, heap)
    const n = g.objectCount
    const live = new Uint8Array(n)
    const shallow = new Float64Array(n)
    const s = heap.spans
    for (let i = 0; i < s.count; i++) {
      for (let k = 0; k < s.objectCount[i]!; k++) {
        const o = s.firstObject[i]! + k
        if (heap.state[o] === LIVE) {
          live[o] = 1
          shallow[o] = s.objectSize[i]!
        }
      }
    }
    const parent = shortestPathParents(n, g.outStart, g.outTo, g.rootTo)
    const reachable = reachableFromParents(parent)
    // One root group per thread: what only that thread's registers, stack and TLS reach.
    const tids = program.core.threads.map(t => t.tid)
    const rootGroup = Int32Array.from(g.rootThread, tid => tids.indexOf(tid))
    const G = tids.length
    const input = {objectCount: n, forward: {edges: {outStart: g.outStart, outTo: g.outTo}}, reverse: {edges: {inStart: g.inStart, inFrom: g.inFrom}}, rootTo: g.rootTo, live, rootGroup, groupCount: G}
    const tree = dominatorTree(input)
    // The pass let go of the edges (so that their memory can go before the pass's peak).
    expect(input.forward.edges).toBeNull()
    expect(input.reverse.edges).toBeNull()

    // The graph the tree is defined on, built naively: vertex 0 is the virtual root, 1..G the
    // thread groups, object o is o + 1 + G.
    const V = (o: number) => o + 1 + G
    const follows = (a: number, b: number) => live[b] === 1 && reachable[a] === reachable[b]
    const succ: number[][] = [[]]
    for (let k = 0; k < G; k++) {
      succ[0]!.push(k + 1)
      succ.push([])
    }
    for (let o = 0; o < n; o++) {
      const out: number[] = []
      if (live[o]) for (let e = g.outStart[o]!; e < g.outStart[o + 1]!; e++) if (follows(o, g.outTo[e]!)) out.push(V(g.outTo[e]!))
      succ.push(out)
    }
    g.rootTo.forEach((r, i) => succ[rootGroup[i]! >= 0 ? rootGroup[i]! + 1 : 0]!.push(V(r)))
    for (const l of tree.leakStarts) succ[0]!.push(V(l))

    // Every live object is in the tree: reachable ones from the roots, leaked ones from the starts.
    const seen = bfs(succ, -1)
    expect(failing(n, o => (seen[V(o)] === 1) === (live[o] === 1)), 'objects in the tree but not live, or live but not in it').toEqual([])

    // Leak starts: one per source component of the leaked graph (nothing outside it reaches it).
    const leaked = [...live.keys()].filter(o => live[o] && !reachable[o])
    const reachesFrom = new Map(leaked.map(o => [o, bfs(succ, -1, [V(o)])]))
    const starts = new Set(tree.leakStarts)
    for (const v of leaked) {
      const sources = leaked.filter(u => reachesFrom.get(u)![V(v)] && !reachesFrom.get(v)![V(u)])
      const sameComponentStarts = leaked.filter(u => starts.has(u) && reachesFrom.get(u)![V(v)] && reachesFrom.get(v)![V(u)])
      if (sources.length === 0) expect(sameComponentStarts.length, `leaked ${v}`).toBe(1)
      else expect(starts.has(v), `leaked ${v} is reached from another component`).toBe(false)
    }

    // Immediate dominators against the simple iterative algorithm.
    const chk = cooperHarveyKennedy(succ)
    const idomIsChk = (o: number) => {
      const want = chk[V(o)]
      const got = tree.idom[o]!
      return want === undefined ? got === NOT_IN_TREE : (got === BY_VIRTUAL_ROOT ? 0 : got < n ? V(got) : BY_GROUP - got + 1) === want
    }
    expect(failing(n, idomIsChk).map(o => ({o, idom: tree.idom[o], chk: chk[V(o)]})), 'idoms that are not the iterative algorithm\'s').toEqual([])

    // Retained sizes against the definition, for a few hundred objects chosen by a seed.
    const bytes = Float64Array.from(shallow)
    const {objects, groupBytes, groupObjects} = retainedSizes(tree, bytes)
    const sum = (mark: Uint8Array) => {
      let b = 0
      let c = 0
      for (let o = 0; o < n; o++) if (mark[V(o)]) {
        b += shallow[o]!
        c++
      }
      return {b, c}
    }
    const all = sum(seen)
    const rnd = seeded(0x70a4)
    const liveList = [...live.keys()].filter(o => live[o])
    for (let t = 0; t < 300; t++) {
      const o = liveList[Math.floor(rnd() * liveList.length)]!
      const without = sum(bfs(succ, V(o)))
      expect(bytes[o], `retained bytes of ${o}`).toBe(all.b - without.b)
      expect(objects[o], `retained objects of ${o}`).toBe(all.c - without.c)
    }
    // What only one thread holds: the bytes no longer reached without that thread's roots.
    let someThreadHolds = 0
    for (let k = 0; k < G; k++) {
      const without = sum(bfs(succ, k + 1))
      expect(groupBytes[k], `bytes only thread ${tids[k]} reaches`).toBe(all.b - without.b)
      expect(groupObjects[k]).toBe(all.c - without.c)
      someThreadHolds += groupBytes[k]!
    }
    expect(someThreadHolds).toBeGreaterThan(0)

    // The same sums over the child lists, as analyze takes them under a memory limit (idom and
    // the preorder gone first): equal to the last bit, the threads' shares too.
    const {childStart, child} = dominatorChildren(tree.idom, n)
    const rootChildGroup = Int32Array.from(child.subarray(childStart[n]!, childStart[n + 1]!), o => groupOfIdom(tree.idom[o]!, n, G))
    const byChildren = Float64Array.from(shallow)
    const groupBytesByChildren = subtreeSumsByChildren(childStart, child, rootChildGroup, G, byChildren)
    const objectsByChildren = treeObjectsCounted(n, child)
    const groupObjectsByChildren = subtreeSumsByChildren(childStart, child, rootChildGroup, G, objectsByChildren)
    const same = (a: ArrayBufferView, b: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
    expect(same(byChildren, bytes), 'retained bytes over the child lists').toBe(true)
    expect(same(objectsByChildren, objects), 'retained objects over the child lists').toBe(true)
    expect(same(groupBytesByChildren, groupBytes) && same(groupObjectsByChildren, groupObjects), 'the threads\' shares').toBe(true)

    // A shortest path: parents are real edges back to a root, and no shorter chain exists.
    // Path lengths count from the roots: every root target one step from the virtual root.
    // Also with the search's levels in bitmaps past 4 objects (the fixtures' levels fit its lists).
    const plain = succ.map((out, v) => (v === 0 ? [...g.rootTo].map(V) : v <= G ? [] : out))
    const depth = bfsDepth(plain)
    const inBitmaps = shortestPathParents(n, g.outStart, g.outTo, g.rootTo, undefined, 4)
    expect(Array.from(reachableFromParents(inBitmaps))).toEqual(Array.from(reachable))
    expect(inBitmaps.some((p, o) => p !== parent[o]), 'levels walked in object order find other parents').toBe(true)
    for (const parents of [parent, inBitmaps]) {
      for (let t = 0; t < 200; t++) {
        let o = liveList[Math.floor(rnd() * liveList.length)]!
        if (!reachable[o]) {
          expect(parents[o]).toBe(UNREACHED)
          continue
        }
        while (parents[o] !== FROM_ROOT) {
          const p = parents[o]!
          expect(succ[V(p)]!.includes(V(o))).toBe(true)
          o = p
        }
        expect(g.rootTo.includes(o)).toBe(true)
      }
      const pathIsShortest = (o: number) => {
        if (!reachable[o]) return true
        let steps = 1
        for (let x = o; parents[x] !== FROM_ROOT; x = parents[x]!) steps++
        return steps === depth[V(o)]
      }
      expect(failing(liveList.length, k => pathIsShortest(liveList[k]!)).map(k => liveList[k]), 'objects whose path is not a shortest one').toEqual([])
    }
    program.core.close()
  })
})

/** A fixture's graph and the dominator pass's input over it (with the reverse graph's sources given), threads as root groups. */
async function passInput(id: string) {
  const {program} = await openFixture(id)
  const heap = modelHeap(program)
  const g = scanHeapGraph(program, heap)
  const n = g.objectCount
  const live = Uint8Array.from(heap.state, s => (s === LIVE ? 1 : 0))
  const tids = program.core.threads.map(t => t.tid)
  const rootGroup = Int32Array.from(g.rootThread, tid => tids.indexOf(tid))
  const input = (inFrom: Uint32Array) => ({objectCount: n, forward: {edges: {outStart: g.outStart, outTo: g.outTo}}, reverse: {edges: {inStart: g.inStart, inFrom}}, rootTo: g.rootTo, live, rootGroup, groupCount: tids.length})
  return {program, g, n, live, input}
}

// The pass writes into memory it is given or that its caller has released (issue 10: fresh pages
// are costly): its results must be those of a pass on fresh memory, whatever that memory held.
// The fixture cores have fewer edges than twice their live objects, so that an analysis there gives
// the pass no array large enough to reuse: here the arrays are given large enough, holding garbage.
describe.each(['v2.10-shared', 'v2.18.1-shared'])('dominators in reused memory on %s', id => {
  it('the DFS in given memory, the forest over the released reverse graph, the child lists in the spent arrays, the search in given memory: the same results', async () => {
    const {program, g, n, live, input} = await passInput(id)
    let liveCount = 0
    for (const l of live) liveCount += l
    const size = liveCount + 1 + program.core.threads.length

    const fresh = dominatorTree(input(g.inFrom))
    const freshChildren = dominatorChildren(fresh.idom, n)

    // The reverse graph's sources with room behind them for the forest (8 bytes a vertex), and
    // memory for the DFS's vertex[] and parent[], both full of garbage past what the pass reads.
    const inFrom = new Uint32Array(Math.max(g.inFrom.length, 2 * size)).fill(0xdead_beef)
    inFrom.set(g.inFrom)
    const memory = new Uint32Array(2 * size).fill(0xdead_beef)
    const spare: Uint32Array[] = []
    const reused = dominatorTree({...input(inFrom), reverseReleased: Int32Array.of(1), memory}, false, spare)
    expect(Array.from(reused.idom)).toEqual(Array.from(fresh.idom))
    expect(Array.from(reused.leakStarts)).toEqual(Array.from(fresh.leakStarts))
    expect(Array.from(reused.preorder)).toEqual(Array.from(fresh.preorder))
    // It did write there: the preorder lies in the given memory, the forest over the sources (not
    // kept for the child lists: only the DFS parents are).
    expect(reused.preorder.buffer).toBe(memory.buffer)
    expect(spare.map(a => a.buffer)).toEqual([memory.buffer])
    expect(Array.from(inFrom.subarray(0, g.inFrom.length))).not.toEqual(Array.from(g.inFrom))

    const children = dominatorChildren(reused.idom, n, spare)
    expect(Array.from(children.childStart)).toEqual(Array.from(freshChildren.childStart))
    expect(Array.from(children.child)).toEqual(Array.from(freshChildren.child))
    expect(spare.length).toBe(0) // a list went into the spent parents

    // Without the release, the pass only reads the reverse graph.
    const kept = new Uint32Array(Math.max(g.inFrom.length, 2 * size)).fill(0xdead_beef)
    kept.set(g.inFrom)
    const before = kept.slice()
    const notReleased = dominatorTree({...input(kept), reverseReleased: Int32Array.of(0)})
    expect(Array.from(notReleased.idom)).toEqual(Array.from(fresh.idom))
    expect(kept).toEqual(before)

    // The shortest-path search in given memory (4 bytes an object, garbage in it).
    const searchMemory = new ArrayBuffer(4 * n)
    new Uint32Array(searchMemory).fill(0xdead_beef)
    const parentInMemory = shortestPathParents(n, g.outStart, g.outTo, g.rootTo, searchMemory)
    expect(parentInMemory.buffer).toBe(searchMemory)
    expect(Array.from(parentInMemory)).toEqual(Array.from(shortestPathParents(n, g.outStart, g.outTo, g.rootTo)))
    program.core.close()
  })
})

// The predecessor copy is shared out in pieces between the pass's thread and a helper (the main
// thread beside a worker): whoever copies which piece, the tree must be the same. Run here one
// after the other: the helper takes its pieces first, the pass the rest.
describe.each(['v2.10-shared', 'v2.18.1-shared'])('dominators with the predecessor copy shared out on %s', id => {
  it('a helper copying some pieces of 16 vertices, or none, or all: the same tree', async () => {
    const {program, g, input} = await passInput(id)
    const inPieces = () => ({...input(g.inFrom), copyPieceShift: 4})
    const fresh = dominatorTree(inPieces())
    for (const most of [0, 1, 7, Infinity]) {
      let copied: PredecessorCopy | null = null
      let helped = -1
      const split = dominatorTree(inPieces(), false, [], undefined, copy => {
        copied = copy
        copyPredecessors(copy, most)
        helped = copy.control[1]!
      })
      expect(copied!.pieces, 'many pieces').toBeGreaterThan(20)
      expect(helped).toBe(Math.min(most, copied!.pieces))
      expect(Array.from(split.idom), `helper took ${most}`).toEqual(Array.from(fresh.idom))
      expect(Array.from(split.preorder)).toEqual(Array.from(fresh.preorder))
      expect(Array.from(split.leakStarts)).toEqual(Array.from(fresh.leakStarts))
    }
    program.core.close()
  })
})

// The pass reads the reverse graph back from the index the analysis is writing (analyze-core.ts):
// the edges' sources object by object, the list starts once for the lists' lengths and once per
// piece of the copy, all in reads of the file: the same tree as from memory.
describe.each(['v2.10-shared', 'v2.18.1-shared'])('dominators with the reverse graph in a file on %s', id => {
  it('read from the file in pieces of 16 objects, some by a helper: the same tree', async () => {
    const {program, g, input} = await passInput(id)
    const fresh = dominatorTree(input(g.inFrom))
    const [inFrom, inStart] = arraysInFile(g.inFrom, g.inStart)
    for (const most of [0, 5]) {
      for (const starts of [g.inStart, inStart]) {
        const fromFile = {...input(g.inFrom), reverse: {edges: {inStart: starts, inFrom}}, copyPieceShift: 4}
        const tree = dominatorTree(fromFile, false, [], undefined, copy => copyPredecessors(copy, most))
        const what = `helper took ${most}, list starts ${starts === inStart ? 'in the file' : 'in memory'}`
        expect(fromFile.reverse.edges).toBeNull()
        expect(Array.from(tree.idom), what).toEqual(Array.from(fresh.idom))
        expect(Array.from(tree.preorder), what).toEqual(Array.from(fresh.preorder))
        expect(Array.from(tree.leakStarts), what).toEqual(Array.from(fresh.leakStarts))
      }
    }
    program.core.close()
  })
})

// Under a tight memory limit the shortest paths, the allocator's own objects and the DFS read the
// forward edges in the index through block caches (graph/forward-edges.ts): here blocks of 8
// elements, two of them cached, so that nearly every object's edges cost a read: the same results.
describe.each(['v2.10-shared', 'v2.18.1-shared'])('the forward edges in a file on %s', id => {
  it('the paths and the tree from blocks of 8 edges, 2 cached: the same as from memory', async () => {
    const {program, g, n, input} = await passInput(id)
    const fresh = dominatorTree(input(g.inFrom))
    const [outTo, outStart] = arraysInFile(g.outTo, g.outStart)
    const inFile = {outStart, outTo, cacheBytes: 2 * 8 * 4, blockWords: 8}
    const fromFile = {...input(g.inFrom), forward: {edges: inFile}}
    const tree = dominatorTree(fromFile)
    expect(fromFile.forward.edges).toBeNull()
    expect(Array.from(tree.idom)).toEqual(Array.from(fresh.idom))
    expect(Array.from(tree.preorder)).toEqual(Array.from(fresh.preorder))
    expect(Array.from(tree.leakStarts)).toEqual(Array.from(fresh.leakStarts))
    expect(fresh.leakStarts.length, 'a leaked part, so its finishing order reads the file too').toBeGreaterThan(0)
    for (const listMax of [undefined, 4]) {
      const inMemory = shortestPathParents(n, g.outStart, g.outTo, g.rootTo, undefined, listMax)
      expect(Array.from(shortestPathParents(n, outStart, outTo, g.rootTo, undefined, listMax, {cacheBytes: 2 * 8 * 4, blockWords: 8}))).toEqual(Array.from(inMemory))
    }
    program.core.close()
  })
})

// Under a limit that does not hold the predecessor lists beside the link-eval forest, the lists are
// copied to a scratch file beside the index in ranges of preorder numbers (here 8 elements at a
// time: hundreds of ranges, each a pass over the reverse graph) and read back through a block
// cache, and vertex[] waits there from the end of the DFS until the forest is gone (pre[] numbered
// reading it back), and parent[] through the semidominator loop: the same tree, and no file left behind.
describe.each(['v2.10-shared', 'v2.18.1-shared'])('dominators with a scratch file on %s', id => {
  it('the lists copied 8 elements at a time and read back, vertex[] in the file: the same tree, the file gone', async () => {
    const {program, g, input} = await passInput(id)
    const fresh = dominatorTree(input(g.inFrom))
    const dir = testTemp('dominators-scratch-')
    const index = `${dir}/core.toma-index`
    let made: string[] = []
    const tight = {...input(g.inFrom), room: () => {
      made = fs.readdirSync(dir)
      return 0
    }, scratchBeside: index, scratchWords: 8}
    const tree = dominatorTree(tight)
    expect(Array.from(tree.idom)).toEqual(Array.from(fresh.idom))
    expect(Array.from(tree.preorder)).toEqual(Array.from(fresh.preorder))
    expect(Array.from(tree.leakStarts)).toEqual(Array.from(fresh.leakStarts))
    // parent[] waited in the file through the semidominator loop (read backwards through a cache).
    expect([fresh.parentParked, tree.parentParked]).toEqual([false, true])
    // The room was asked after the file was made (before the forest), and the file is gone.
    expect(made).toEqual([expect.stringMatching(/^\.core\.toma-index\.scratch\.toma-tmp-\d+-[0-9a-f]{16}$/)])
    expect(fs.readdirSync(dir)).toEqual([])
    program.core.close()
  })
})

/** Two arrays written to a file as in the index (other bytes before and between them), and where each lies. */
function arraysInFile(first: Uint32Array, second: Uint32Array): [FileArray, FileArray] {
  const path = `${testTemp('dominators-')}/index`
  const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)
  fs.writeFileSync(path, Buffer.concat([Buffer.alloc(24, 0xee), bytes(first), Buffer.alloc(8, 0xee), bytes(second)]))
  return [
    {path, byteOffset: 24, length: first.length, written: Int32Array.of(1)},
    {path, byteOffset: 24 + first.byteLength + 8, length: second.length, written: Int32Array.of(1)},
  ]
}

/** Vertices reached from `from` (default the virtual root) without passing through `removed`. */
function bfs(succ: number[][], removed: number, from = [0]): Uint8Array {
  const seen = new Uint8Array(succ.length)
  const queue = from.filter(v => v !== removed)
  for (const v of queue) seen[v] = 1
  for (let h = 0; h < queue.length; h++) {
    for (const w of succ[queue[h]!]!) {
      if (w === removed || seen[w]) continue
      seen[w] = 1
      queue.push(w)
    }
  }
  return seen
}

function bfsDepth(succ: number[][]): Int32Array {
  const depth = new Int32Array(succ.length).fill(-1)
  depth[0] = 0
  const queue = [0]
  for (let h = 0; h < queue.length; h++) {
    for (const w of succ[queue[h]!]!) {
      if (depth[w] >= 0) continue
      depth[w] = depth[queue[h]!]! + 1
      queue.push(w)
    }
  }
  return depth
}

/** "A Simple, Fast Dominance Algorithm" (Cooper, Harvey, Kennedy 2001), on vertex 0 as entry. */
function cooperHarveyKennedy(succ: number[][]): Array<number | undefined> {
  const post: number[] = []
  const order = new Int32Array(succ.length).fill(-1)
  const visited = new Uint8Array(succ.length)
  const stack: Array<[number, number]> = [[0, 0]]
  visited[0] = 1
  while (stack.length) {
    const top = stack[stack.length - 1]!
    const out = succ[top[0]]!
    if (top[1] < out.length) {
      const w = out[top[1]++]!
      if (!visited[w]) {
        visited[w] = 1
        stack.push([w, 0])
      }
    } else {
      order[top[0]] = post.length
      post.push(top[0])
      stack.pop()
    }
  }
  const preds: number[][] = succ.map(() => [])
  succ.forEach((out, v) => {
    if (visited[v]) for (const w of out) preds[w]!.push(v)
  })
  const idom: Array<number | undefined> = new Array(succ.length).fill(undefined)
  idom[0] = 0
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (order[a]! < order[b]!) a = idom[a]!
      while (order[b]! < order[a]!) b = idom[b]!
    }
    return a
  }
  for (let changed = true; changed; ) {
    changed = false
    for (let i = post.length - 2; i >= 0; i--) {
      const b = post[i]!
      let d: number | undefined
      for (const p of preds[b]!) {
        if (idom[p] === undefined) continue
        d = d === undefined ? p : intersect(p, d)
      }
      if (d !== undefined && idom[b] !== d) {
        idom[b] = d
        changed = true
      }
    }
  }
  return idom
}

// The tree walk's sums (per type, each byte once; what lies under each accumulation point) come
// from two threads, each walking a part of the virtual root's children: any cut must give the sums
// of one walk, and those the definitions.
describe.each(['v2.10-shared', 'v2.18.1-shared'])('the dominator tree walked in parts on %s', id => {
  it('every cut of the virtual root\'s children: the same sums as one walk, and as the definitions', async () => {
    const {program, g, n, live, input} = await passInput(id)
    const tree = dominatorTree(input(g.inFrom))
    const {childStart, child} = dominatorChildren(tree.idom, n)
    const heap = modelHeap(program)
    const shallow = new Float64Array(n)
    const s = heap.spans
    for (let i = 0; i < s.count; i++) for (let k = 0; k < s.objectCount[i]!; k++) if (live[s.firstObject[i]! + k]) shallow[s.firstObject[i]! + k] = s.objectSize[i]!
    const own = shallow.slice()
    const retainedBytes = shallow
    const {objects: retainedObjects} = retainedSizes(tree, retainedBytes)
    const types = nameObjects(g.firstWords, new TypeNamer(program))
    const typeCount = types.names.length + 1
    const rootChildren = Array.from(child.subarray(childStart[n]!, childStart[n + 1]!))
    // Points: the root's children retaining the most, and one deeper object with children.
    const points = [...rootChildren].sort((a, b) => retainedBytes[b]! - retainedBytes[a]!).slice(0, 4)
    const deep = Array.from(child.subarray(childStart[points[0]!]!, childStart[points[0]! + 1]!)).find(c => childStart[c + 1]! > childStart[c]!)
    if (deep !== undefined) points[0] = deep
    const whole = {childStart, child, typeOf: types.typeOf, typeCount, retainedBytes, points, from: 0, to: rootChildren.length}
    const one = walkDominatorTree(whole)

    // The definitions: an object adds what it retains to its type unless a dominator of it has
    // that type; under a point, every object it dominates at its own size, by type or size class.
    const wantBytes = new Float64Array(typeCount)
    const wantObjects = new Float64Array(typeCount)
    const dominatorOf = (o: number) => (tree.idom[o]! < n ? tree.idom[o]! : -1)
    for (let o = 0; o < n; o++) {
      const t = types.typeOf[o]!
      if (tree.idom[o] === NOT_IN_TREE || t === 0) continue
      let above = false
      for (let d = dominatorOf(o); d >= 0 && !above; d = dominatorOf(d)) above = types.typeOf[d] === t
      if (above) continue
      wantBytes[t]! += retainedBytes[o]!
      wantObjects[t]! += retainedObjects[o]!
    }
    expect(Array.from(one.bytes)).toEqual(Array.from(wantBytes))
    expect(Array.from(one.objects)).toEqual(Array.from(wantObjects))
    expect(wantBytes.some(b => b > 0)).toBe(true)
    points.forEach((p, k) => {
      let objects = 0
      let bytes = 0
      for (let o = 0; o < n; o++) {
        let under = false
        for (let d = dominatorOf(o); d >= 0 && !under; d = dominatorOf(d)) under = d === p
        if (under) {
          objects++
          bytes += own[o]!
        }
      }
      expect(one.under[k]!.objects, `point ${p}`).toBe(objects)
      expect(one.under[k]!.groups.reduce((sum, gr) => sum + gr.bytes, 0)).toBeLessThanOrEqual(bytes)
    })
    expect(one.under.some(u => u.objects > 10)).toBe(true)

    const cuts = new Set([0, 1, balancedSplit(rootChildren.map(o => retainedObjects[o]!)), rootChildren.length - 1, rootChildren.length])
    for (const p of points) cuts.add(rootChildren.indexOf(p)).add(rootChildren.indexOf(p) + 1)
    for (const cut of cuts) {
      if (cut < 0 || cut > rootChildren.length) continue
      const merged = mergedWalks(walkDominatorTree({...whole, to: cut}), walkDominatorTree({...whole, from: cut}))
      expect(merged, `cut at ${cut} of ${rootChildren.length}`).toEqual(one)
    }
    program.core.close()
  })
})
