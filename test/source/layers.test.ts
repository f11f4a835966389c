import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'

/**
 * The layers, bottom to top: a file may import its own layer and those below, never one above.
 * Each row names the folders (or files) of one layer, relative to the repository; a file belongs
 * to the row with the longest matching path. A new folder goes into a row here, or this test fails.
 * Rows whose `models` is set are allocator models: only the registry row may import them, so that
 * nothing above the neutral heap layer (src/heap) knows which allocator ran.
 */
const LAYERS: Array<{layer: string; paths: string[]; models?: true; registry?: true}> = [
  {layer: 'errors', paths: ['src/errors.ts', 'src/elfy.d.ts']},
  {layer: 'util', paths: ['src/util']},
  {layer: 'store', paths: ['src/store']},
  {layer: 'core and input', paths: ['src/core', 'src/input']},
  {layer: 'elf', paths: ['src/elf']},
  {layer: 'program', paths: ['src/program']},
  {layer: 'heap', paths: ['src/heap']},
  {layer: 'allocator models', paths: ['src/tcmalloc'], models: true},
  {layer: 'google/tcmalloc model', paths: ['src/google-tcmalloc'], models: true},
  {layer: 'glibc malloc model (another allocator in the process, for toma memory)', paths: ['src/glibc-malloc'], models: true},
  {layer: 'registry', paths: ['src/allocators.ts'], registry: true},
  {layer: 'graph', paths: ['src/graph']},
  {layer: 'dominators', paths: ['src/dominators']},
  {layer: 'naming', paths: ['src/naming']},
  {layer: 'index', paths: ['src/index']},
  {layer: 'queries', paths: ['src/queries']},
  {layer: 'pipeline', paths: ['src/pipeline']},
  {layer: 'report', paths: ['src/report']},
  {layer: 'serve (toma serve: the HTTP server and its pages)', paths: ['src/serve']},
  {layer: 'cli', paths: ['src/cli']},
  {layer: 'commands', paths: ['commands']},
]

/** Imports that run up a layer today, each with why it is still there. */
const UPWARD_EXCEPTIONS: Record<string, string> = {}

/** Import cycles that exist today (their files, sorted), each with why it is still there. */
const CYCLE_EXCEPTIONS: Record<string, string> = {}

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Every .ts file under src/ and commands/, relative to the repository, with the files it imports (type imports and import() included). */
function importGraph(): Map<string, string[]> {
  const files: string[] = []
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), {withFileTypes: true})) {
      const rel = `${dir}/${e.name}`
      if (e.isDirectory()) walk(rel)
      else if (e.name.endsWith('.ts')) files.push(rel)
    }
  }
  walk('src')
  walk('commands')
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const {importedFiles} = ts.preProcessFile(fs.readFileSync(path.join(ROOT, file), 'utf8'), true, true)
    const targets = importedFiles
      .map(i => i.fileName)
      .filter(spec => spec.startsWith('.'))
      .map(spec => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, '.ts'))
      .filter(t => t.endsWith('.ts'))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** The row of a file: the longest path that holds it. */
function layerOf(file: string): number {
  let best = -1
  let bestLength = -1
  LAYERS.forEach((row, i) => {
    for (const p of row.paths) if ((file === p || file.startsWith(`${p}/`)) && p.length > bestLength) [best, bestLength] = [i, p.length]
  })
  return best
}

/** The rule broken by each import of the graph: a file in no layer, an import up a layer, an allocator model imported past the registry. */
function layerViolations(graph: Map<string, string[]>, upwardExceptions: Record<string, string> = UPWARD_EXCEPTIONS): string[] {
  const out: string[] = []
  for (const [file, targets] of graph) {
    const from = layerOf(file)
    if (from < 0) out.push(`${file} is in no layer of the table`)
    for (const target of targets) {
      const to = layerOf(target)
      if (from < 0 || to < 0) continue
      const edge = `${file} -> ${target}`
      if (to > from && !(edge in upwardExceptions)) out.push(`${edge}: ${LAYERS[from]!.layer} imports ${LAYERS[to]!.layer}, a layer above it`)
      if (LAYERS[to]!.models && to !== from && !LAYERS[from]!.registry) out.push(`${edge}: only the registry imports an allocator model`)
    }
  }
  return out
}

/** The import cycles of the graph (strongly connected sets of files, Tarjan's algorithm), each as its sorted files joined by spaces. */
function importCycles(graph: Map<string, string[]>): string[] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[] = []
  let next = 0
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const set: string[] = []
    let w: string
    do {
      w = stack.pop()!
      onStack.delete(w)
      set.push(w)
    } while (w !== v)
    if (set.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(set.sort().join(' '))
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return cycles.sort()
}

describe('the layers of src/ and commands/', () => {
  const graph = importGraph()

  it('has found the files and their imports', () => {
    expect(graph.size).toBeGreaterThan(150)
    expect(graph.get('src/allocators.ts')).toContain('src/tcmalloc/model.ts')
  })

  it('has no import that runs up a layer, and none of an allocator model but from the registry', () => {
    expect(layerViolations(graph)).toEqual([])
  })

  it('has no import cycle between files', () => {
    expect(importCycles(graph).filter(c => !(c in CYCLE_EXCEPTIONS))).toEqual([])
  })

  it('lists no exception that no longer exists', () => {
    const edges = new Set([...graph].flatMap(([file, targets]) => targets.map(t => `${file} -> ${t}`)))
    expect(Object.keys(UPWARD_EXCEPTIONS).filter(e => !edges.has(e))).toEqual([])
    const cycles = new Set(importCycles(graph))
    expect(Object.keys(CYCLE_EXCEPTIONS).filter(c => !cycles.has(c))).toEqual([])
  })

  it('fails on an upward import, an allocator model imported from above the registry, and a cycle', () => {
    const bad = new Map(graph)
    bad.set('src/heap/objects.ts', [...graph.get('src/heap/objects.ts')!, 'src/graph/scan.ts'])
    bad.set('src/graph/roots.ts', [...graph.get('src/graph/roots.ts')!, 'src/tcmalloc/heap.ts'])
    const found = new Set(layerViolations(graph))
    expect(layerViolations(bad).filter(v => !found.has(v)).sort()).toEqual([
      'src/graph/roots.ts -> src/tcmalloc/heap.ts: only the registry imports an allocator model',
      'src/heap/objects.ts -> src/graph/scan.ts: heap imports graph, a layer above it',
    ])
    bad.set('src/util/search.ts', ['src/util/growable.ts'])
    bad.set('src/util/growable.ts', ['src/util/search.ts'])
    expect(importCycles(bad)).toContain('src/util/growable.ts src/util/search.ts')
  })
})
