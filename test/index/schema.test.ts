import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {analyzeCore} from '../../src/pipeline/analyze-core.js'
import {DamagedIndexError, IndexFile, IndexWriter, writeIndex} from '../../src/index/index-file.js'
import {INDEX_ARRAYS, LENGTH_GROUPS, stageOf, type ArrayName, type ElementTypes, type LengthGroup} from '../../src/index/schema.js'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {fixtureCorePath, fixtureFlags, fixtureIndex} from '../helpers/fixture-core.js'
import {INDEX_DATA_START, indexLayout} from '../helpers/index-layout.js'
import {testTemp} from '../helpers/test-temp.js'

const CTORS = {u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array} as const
const NAMES = Object.keys(INDEX_ARRAYS) as ArrayName[]
const typesOf = (name: ArrayName): readonly string[] => {
  const t: string | readonly string[] = INDEX_ARRAYS[name].type
  return typeof t === 'string' ? [t] : t
}
const isOptional = (name: ArrayName) => 'optional' in INDEX_ARRAYS[name]
const groupSpec = (group: LengthGroup) => LENGTH_GROUPS[group] as {of?: LengthGroup; length?: (n: number) => number}

/** The smallest index the schema allows: every array of its first declared type, each base group empty. */
function smallestArrays(): Record<string, ElementTypes[keyof ElementTypes]> {
  const lengthOf = (group: LengthGroup): number => {
    const g = groupSpec(group)
    return g.of ? g.length!(lengthOf(g.of)) : 0
  }
  return Object.fromEntries(NAMES.map(n => [n, new CTORS[typesOf(n)[0] as keyof typeof CTORS](lengthOf(INDEX_ARRAYS[n].group))]))
}

/** The file at `file` with its array table changed by `change` (the arrays' bytes kept). */
function withTable(file: string, out: string, change: (arrays: Record<string, {type: string; offset: number; length: number}>) => void): void {
  const bytes = fs.readFileSync(file)
  const {header, headerAt} = indexLayout(bytes)
  change(header.arrays)
  const json = Buffer.from(JSON.stringify(header))
  const pre = Buffer.from(bytes.subarray(0, INDEX_DATA_START))
  pre.writeUInt32LE(json.length, 12)
  fs.writeFileSync(out, Buffer.concat([pre, bytes.subarray(INDEX_DATA_START, headerAt), json]))
}

let work: string
beforeAll(() => {
  work = testTemp('toma-schema-')
})
afterAll(() => fs.rmSync(work, {recursive: true, force: true}))

describe('the index schema, written', () => {
  it('refuses an array the schema does not declare, or of another element type', () => {
    const w = new IndexWriter(path.join(work, 'refused.toma-index'))
    try {
      expect(() => w.add('object.nothing' as ArrayName, new Uint8Array(1))).toThrow(/array object\.nothing is not one the index schema declares/)
      expect(() => w.add('span.start', new Uint32Array(1) as unknown as Float64Array)).toThrow(/array span\.start is u32, the index schema says f64/)
      expect(() => w.addPieces('object.state', [new Int32Array(2) as unknown as Uint8Array])).toThrow(/array object\.state is i32, the index schema says u8/)
      expect(() => w.addAll({'object.via': new Uint8Array(1), 'object.else': new Uint8Array(1)} as never)).toThrow(/object\.else is not one the index schema declares/)
      expect(() => w.addAllBehind({'root.kind': new Float64Array(1)} as never)).toThrow(/array root\.kind is f64, the index schema says u8/)
      // Both of object.type's declared types are taken.
      w.add('object.type', new Uint16Array(1))
      expect(() => w.add('object.type', new Uint32Array(1))).toThrow(/written twice/)
      w.add('dom.child', new Uint32Array(1))
    } finally {
      w.abandon()
    }
  })

  it('writes an array where its place was kept, as if it had come in order; refuses another length, and a place never filled', () => {
    const idom = Uint32Array.of(5, 6, 7)
    const bytes = Float64Array.of(2 ** 40, 3, 1)
    const objects = Uint32Array.of(3, 1, 1)
    const child = Uint32Array.of(1, 2)
    const inOrder = path.join(work, 'in-order.toma-index')
    const w = new IndexWriter(inOrder)
    w.addAll({'object.idom': idom, 'object.retainedBytes': bytes, 'object.retainedObjects': objects, 'dom.child': child})
    w.finish({})
    // The retained sizes' order under a memory limit (retention.ts: finish): the counts before the bytes.
    const kept = path.join(work, 'kept.toma-index')
    const k = new IndexWriter(kept)
    k.keepPlace('object.idom', 'u32', 3)
    k.keepPlace('object.retainedBytes', 'f64', 3)
    k.keepPlace('object.retainedObjects', 'u32', 3)
    k.add('object.retainedObjects', objects)
    expect(() => k.add('object.retainedBytes', Float64Array.of(1, 2))).toThrow(/object\.retainedBytes: 2 elements of f64 where 3 of f64 were kept a place/)
    k.add('object.retainedBytes', bytes)
    k.add('dom.child', child)
    expect(() => k.finish({})).toThrow(/object\.idom: a place kept, never written/)
    k.add('object.idom', idom)
    expect(() => k.add('object.idom', idom)).toThrow(/written twice/)
    k.finish({})
    expect(fs.readFileSync(kept).equals(fs.readFileSync(inOrder))).toBe(true)
  })

  it('is checked by the compiler: a wrong name or element type does not compile', () => {
    // Never run: each line must be a type error (`npx tsc -p tsconfig.test.json` fails otherwise).
    const never = (w: IndexWriter, f: IndexFile) => {
      // @ts-expect-error an array the schema does not declare
      w.add('object.nothing', new Uint8Array(1))
      // @ts-expect-error another element type
      w.add('span.start', new Uint32Array(1))
      // @ts-expect-error another element type, in a group of arrays
      w.addAll({'object.via': new Uint8Array(1), 'object.reachable': new Float64Array(1)})
      // @ts-expect-error an undeclared name among declared ones
      w.addAllBehind({'span.start': new Float64Array(1), 'span.elsewhere': new Float64Array(1)})
      // @ts-expect-error a read back of an array that is not u32
      w.fileArray('object.state', new Int32Array(1))
      // @ts-expect-error an array the schema does not declare
      f.array('object.nothing')
      // @ts-expect-error read as another element type
      const wrong: Uint8Array = f.array('span.start')
      return wrong
    }
    expect(typeof never).toBe('function')
  })
})

describe('the index schema, read', () => {
  let good: string
  beforeAll(() => {
    good = path.join(work, 'smallest.toma-index')
    writeIndex(good, {}, smallestArrays() as never)
  })

  it('opens the smallest index the schema allows, and refuses a read of an undeclared array', () => {
    const f = IndexFile.open(good)!
    try {
      expect(f.names()).toEqual(NAMES)
      expect(f.length('edge.outStart')).toBe(1)
      expect(() => f.array('object.nothing' as ArrayName)).toThrow(/array object\.nothing is not one the index schema declares/)
    } finally {
      f.close()
    }
  })

  const damages: Array<[string, (a: Record<string, {type: string; offset: number; length: number}>) => void, RegExp]> = [
    ['an array not declared', a => (a['object.extra'] = {...a['object.state']!}), /array object\.extra is not one the index schema declares/],
    ['an array renamed', a => {
      a['span.begin'] = a['span.start']!
      delete a['span.start']
    }, /array span\.begin is not one the index schema declares/],
    ['another element type', a => (a['object.state']!.type = 'f64'), /array object\.state is f64, the index schema says u8/],
    ['a required array missing', a => delete a['root.toOffset'], /no array root\.toOffset/],
  ]
  it.each(damages)('refuses an index whose array table has %s (one clear line)', (_what, change, problem) => {
    const bad = path.join(work, 'bad.toma-index')
    withTable(good, bad, change)
    expect(() => IndexFile.open(bad)).toThrow(DamagedIndexError)
    expect(() => IndexFile.open(bad)).toThrow(problem)
  })

  it('opens an index of the model stage alone; refuses one holding an array of a stage it does not hold, lacking one of a stage it holds, or with a stage list no analysis writes', () => {
    const modelArrays = Object.fromEntries(Object.entries(smallestArrays()).filter(([n]) => stageOf(n as ArrayName) === 'model'))
    const model = path.join(work, 'model.toma-index')
    writeIndex(model, {}, modelArrays as never, ['model'])
    const f = IndexFile.open(model)!
    expect(f.stages).toEqual(['model'])
    expect(f.names().sort()).toEqual(NAMES.filter(n => stageOf(n) === 'model').sort())
    f.close()
    const withGraph = path.join(work, 'model-with-graph.toma-index')
    writeIndex(withGraph, {}, {...modelArrays, 'edge.to': new Uint32Array(0)} as never, ['model'])
    expect(() => IndexFile.open(withGraph)).toThrow(/array edge\.to belongs to the graph stage, which the index does not hold/)
    const lacking = path.join(work, 'model-lacking.toma-index')
    const {'object.state': _state, ...rest} = modelArrays
    writeIndex(lacking, {}, rest as never, ['model'])
    expect(() => IndexFile.open(lacking)).toThrow(/no array object\.state/)
    for (const stages of [['graph'], ['graph', 'model'], [], ['model', 'model']]) {
      const odd = path.join(work, 'odd-stages.toma-index')
      writeIndex(odd, {}, smallestArrays() as never, stages as never)
      expect(() => IndexFile.open(odd), JSON.stringify(stages)).toThrow(/bad stage list/)
    }
  })

  it('refuses arrays of one length group that differ in length, and a derived group not its base\'s length transformed', () => {
    // One span array one longer than the others: written (the writer does not know the groups), refused when read.
    const grown = path.join(work, 'grown.toma-index')
    writeIndex(grown, {}, {...smallestArrays(), 'span.pages': new Float64Array(1)} as never)
    expect(() => IndexFile.open(grown)).toThrow(/arrays span\.record and span\.pages differ in length \(both one per span\)/)
    const derived = path.join(work, 'derived.toma-index')
    writeIndex(derived, {}, {...smallestArrays(), 'sample.stackStart': new Uint32Array(2)} as never)
    expect(() => IndexFile.open(derived)).toThrow(/array sample\.stackStart does not have the length its group \(sample\+1\) takes from sample\.span/)
  })
})

describe('the query surface', () => {
  // HeapIndex is the only way into an index: its arrays are named in src/index alone, so the
  // schema's readers are all there (an IndexFile read elsewhere would be one it does not list).
  it('no index array is read outside src/index', () => {
    const src = fileURLToPath(new URL('../../src', import.meta.url))
    const reads: string[] = []
    for (const file of fs.readdirSync(src, {recursive: true, encoding: 'utf8'})) {
      if (!file.endsWith('.ts') || file.startsWith(`index${path.sep}`)) continue
      const text = fs.readFileSync(path.join(src, file), 'utf8')
      for (const m of text.matchAll(/\bindex\.file\b|\bfile\.(array|slice)\(|\bIndexFile\b/g)) reads.push(`${file}: ${m[0]}`)
    }
    expect(reads).toEqual([])
  })

  it('every reader the schema lists is a module of src', () => {
    const src = fileURLToPath(new URL('../../src', import.meta.url))
    const missing = NAMES.flatMap(n => INDEX_ARRAYS[n].readers.map(r => r.split(' ')[0]!).filter(r => !fs.existsSync(path.join(src, `${r}.ts`))))
    expect(missing).toEqual([])
  })
})

// A real analysis: the index holds exactly the schema's arrays, of the declared types, each length
// group of one length and each derived group's length its base's transformed.
const entry = fixtureIndex().find(f => f.id === 'v2.10-sampled')
describe.skipIf(!entry)('an analysed fixture core (v2.10-sampled) holds exactly the schema\'s arrays', () => {
  let program: Program
  let core: string
  beforeAll(async () => {
    core = await fixtureCorePath(entry!.id)
    program = Program.load(Core.open(core), fixtureFlags(entry!))
  })
  afterAll(() => program?.core.close())

  const tableOf = (file: string) => indexLayout(fs.readFileSync(file)).header as {meta: {typeNames: string[]}; arrays: Record<string, {type: string; length: number}>}

  it('with retention (as analyze makes it): every declared array, of a declared type, the groups consistent', () => {
    const file = path.join(work, 'analysed.toma-index')
    analyzeCore(core, fixtureFlags(entry!), undefined, file, program, {workers: 1})
    const {meta, arrays} = tableOf(file)
    expect(Object.keys(arrays).sort()).toEqual([...NAMES].sort())
    for (const name of NAMES) expect(typesOf(name), name).toContain(arrays[name]!.type)
    const lengths = new Map<LengthGroup, number>()
    for (const name of NAMES) {
      const group = INDEX_ARRAYS[name].group
      if (!lengths.has(group)) lengths.set(group, arrays[name]!.length)
      expect(arrays[name]!.length, `${name} (group ${group})`).toBe(lengths.get(group))
    }
    for (const [group, length] of lengths) {
      const g = groupSpec(group)
      if (g.of) expect(length, group).toBe(g.length!(lengths.get(g.of)!))
    }
    // The groups measured by the meta and the core, and some not empty on this core.
    expect(lengths.get('type')).toBe(meta.typeNames.length + 1)
    expect(lengths.get('thread')).toBe(program.core.threads.length)
    for (const group of ['span', 'object', 'edge', 'root', 'sample', 'sighting'] as const) expect(lengths.get(group), group).toBeGreaterThan(0)
    const f = IndexFile.open(file)!
    f.close()
  })

  it('of the model stage: exactly the model stage\'s arrays, and the index opens saying so', () => {
    const file = path.join(work, 'model-stage.toma-index')
    analyzeCore(core, fixtureFlags(entry!), undefined, file, program, {workers: 1, stage: 'model'})
    const {arrays} = tableOf(file)
    expect(Object.keys(arrays).sort()).toEqual(NAMES.filter(n => stageOf(n) === 'model').sort())
    const f = IndexFile.open(file)!
    expect(f.stages).toEqual(['model'])
    f.close()
  })

  it('with retention off: exactly the arrays declared optional are absent, and the index opens', () => {
    const file = path.join(work, 'reachability-only.toma-index')
    analyzeCore(core, fixtureFlags(entry!), undefined, file, program, {workers: 1, retention: false})
    const {arrays} = tableOf(file)
    // The arrays optional for retention off (others are optional for indexes made before them: written always).
    const forRetention = (n: ArrayName) => isOptional(n) && /retention off/.test((INDEX_ARRAYS[n] as {optional?: string}).optional!)
    expect(NAMES.filter(n => !Object.hasOwn(arrays, n))).toEqual(NAMES.filter(forRetention))
    const f = IndexFile.open(file)!
    f.close()
  })
})
