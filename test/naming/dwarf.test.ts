import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ElfFile} from '../../src/elf/elf-file.js'
import {HeapIndex} from '../../src/index/heap-index.js'
import {brotliCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Issue 30, tier 2: types from DWARF flow from typed roots (globals, main's locals) through typed
// pointers into the heap (fixtures/typesdemo: plain structs with no vtable, a tree, lists, a
// struct of pointer arrays, a unique_ptr, a shared_ptr, a vector<ListNode*>, a map<int, Item*>, a
// set<long>, a list<Item*>, an unordered_map<int, Item*>, a string). The -g build's DWARF is DWARF 5 as g++ 12 writes it; the
// separate debug file's sections are zlib-compressed (SHF_COMPRESSED), as Debian's are.
// Every expected name is what the process recorded about the object it allocated (truth.json).

const DIR = fileURLToPath(new URL('../../fixtures/typesdemo', import.meta.url))
const TCMALLOC = fileURLToPath(new URL('../../fixtures/demo/libtcmalloc.so.4', import.meta.url))

interface TruthObject {
  address: string
  size: number
  name: string
  kind: string
  /** What reaches it: a global, or main's local `local_list` or `local_bag`. */
  root: 'global' | 'local_list' | 'local_bag'
  /** The tier that names it when not the DWARF one (the Circle: its vtable). */
  via?: string
}
interface Truth {
  currentAllocatedBytes: number
  objects: TruthObject[]
  objectBytes: number
  /** Blocks the program points to with two unrelated types. */
  conflicts: Array<{address: string; size: number; types: string[]}>
}

const truth = JSON.parse(fs.readFileSync(path.join(DIR, 'truth.json'), 'utf8')) as Truth
/** The -O2 build's run (fixtures/typesdemo/o2): its own objects at their own addresses. */
const truthO2 = JSON.parse(fs.readFileSync(path.join(DIR, 'o2', 'truth.json'), 'utf8')) as Truth

interface Named {
  /** Every live slot the DWARF tier named: address → [name, kind]. */
  byDwarf: Map<number, [string, string]>
  /** The name, kind and tier of each truth object's slot. */
  ofTruth: Array<{name: string | null; kind: string | null; via: string}>
  liveBytes: number
  namedBytes: number
  notes: string[]
  conflicts: {count: number; examples: string[]}
  /** The name of each truth conflict's block (null: unnamed). */
  ofConflicts: Array<string | null>
}

/** What an index says of the heap: the DWARF tier's names, and every name's share of live bytes. */
function readNames(indexPath: string, truth: Truth): Named {
  const index = HeapIndex.open(indexPath)!
  try {
    const kindOf = (name: string | null) => (name === null ? null : index.typeKind(index.meta.typeNames.indexOf(name) + 1))
    const byDwarf = new Map<number, [string, string]>()
    let liveBytes = 0
    let namedBytes = 0
    for (let i = 0; i < index.objectCount; i++) {
      if (index.state(i) !== 'live') continue
      const o = index.object(i)
      const name = index.type(i)
      liveBytes += o.size
      if (name !== null) namedBytes += o.size
      if (index.via(i) === 'debug-info') byDwarf.set(o.start, [name!, kindOf(name)!])
    }
    const ofTruth = truth.objects.map(t => {
      const ref = index.objectAt(Number(t.address))!
      const name = index.type(ref.index)
      return {name, kind: kindOf(name), via: index.via(ref.index)}
    })
    const ofConflicts = truth.conflicts.map(c => index.type(index.objectAt(Number(c.address))!.index))
    return {byDwarf, ofTruth, liveBytes, namedBytes, notes: index.meta.naming.notes, conflicts: index.meta.naming.conflicts, ofConflicts}
  } finally {
    index.file.close()
  }
}

describe('names from DWARF (typesdemo)', () => {
  let work: string
  let core: string
  let coreO2: string
  const named: Record<string, Named> = {}
  /** Analyzes with this executable file; no host debug folder (its libc6-dbg would add libc's DWARF). */
  const analyze = async (label: string, exe: string, build: {core: string; truth: Truth} = {core, truth}) => {
    const indexPath = path.join(work, `${label}.toma-index`)
    const r = await runToma(['analyze', build.core, '--exe', exe, '--tcmalloc', TCMALLOC, '--debug-file-directory', path.join(work, 'no-debug'), '--index', indexPath], {cwd: work})
    expect(r.status, r.stderr).toBe(0)
    named[label] = readNames(indexPath, build.truth)
  }

  beforeAll(async () => {
    work = testTemp('toma-dwarf-')
    fs.mkdirSync(path.join(work, 'no-debug'))
    core = await brotliCorePath(path.join(DIR, 'core.br'))
    coreO2 = await brotliCorePath(path.join(DIR, 'o2', 'core.br'))
    // The stripped file alone, without its debug file beside it.
    fs.mkdirSync(path.join(work, 'bare'))
    fs.copyFileSync(path.join(DIR, 'stripped', 'typesdemo'), path.join(work, 'bare', 'typesdemo'))
    // The -g file with its abbreviation table overwritten: DWARF that does not parse.
    fs.mkdirSync(path.join(work, 'damaged'))
    const damaged = path.join(work, 'damaged', 'typesdemo')
    fs.copyFileSync(path.join(DIR, 'typesdemo'), damaged)
    const abbrev = ElfFile.load(damaged).section('.debug_abbrev')!
    const fd = fs.openSync(damaged, 'r+')
    fs.writeSync(fd, Buffer.alloc(abbrev.size, 0xff), 0, abbrev.size, abbrev.offset)
    fs.closeSync(fd)

    await analyze('with-g', path.join(DIR, 'typesdemo'))
    await analyze('debug-file', path.join(DIR, 'stripped', 'typesdemo'))
    await analyze('bare', path.join(work, 'bare', 'typesdemo'))
    await analyze('damaged', damaged)
    await analyze('o2', path.join(DIR, 'o2', 'typesdemo'), {core: coreO2, truth: truthO2})
  }, 240_000)
  afterAll(() => {
    if (work) fs.rmSync(work, {recursive: true, force: true})
  })

  const kinds = [...new Set(truth.objects.map(o => o.kind))]

  it('the truth covers every kind the fixture makes, from globals and from main\'s locals', () => {
    expect([...kinds].sort()).toEqual(['object', 'std::list node', 'std::map/set node', 'std::string buffer', 'std::unordered buckets', 'std::unordered node', 'std::vector body'])
    expect(new Set(truth.objects.map(o => o.name))).toEqual(new Set(['Item', 'ListNode', 'TreeNode', 'Bag', 'Circle', 'std::string buffer', 'std::vector<ListNode*> body',
      'std::map<int, Item*> node', 'std::set<long> node', 'std::list<Item*> node', 'std::unordered_map<int, Item*> node', 'std::unordered_map<int, Item*> buckets']))
    expect(truth.objects.filter(o => o.root === 'local_list').length).toBe(500)
    expect(truth.objects.filter(o => o.root === 'local_bag').length).toBe(36)
  })

  describe.each([['with-g', 'the -g build'], ['debug-file', 'the stripped build and its separate debug file']])('%s: %s', label => {
    it.each(kinds)('kind %s: recall 100 % (every object the process made is named so, by debug-info unless the truth says vtable)', kind => {
      const n = named[label]!
      const wrong = truth.objects.flatMap((t, i) => (t.kind === kind && (n.ofTruth[i]!.name !== t.name || n.ofTruth[i]!.kind !== kind || n.ofTruth[i]!.via !== (t.via ?? 'debug-info')) ? [`${t.address} ${t.name} (${t.root}): ${JSON.stringify(n.ofTruth[i])}`] : []))
      expect(wrong.slice(0, 5)).toEqual([])
      expect(truth.objects.filter(t => t.kind === kind).length).toBeGreaterThan(0)
    })

    it.each(kinds)('kind %s: precision 100 % (every block named so by debug-info is the process\'s object of that name)', kind => {
      const n = named[label]!
      const byAddress = new Map(truth.objects.map(t => [Number(t.address), t]))
      const wrong = [...n.byDwarf].filter(([, [, k]]) => k === kind).flatMap(([addr, [name]]) => (byAddress.get(addr)?.name === name ? [] : [`0x${addr.toString(16)} named ${name}, truth: ${byAddress.get(addr)?.name ?? 'none'}`]))
      expect(wrong.slice(0, 5)).toEqual([])
    })

    it('names ≥ 90 % of the live bytes, every byte the process allocated and typed', () => {
      const n = named[label]!
      // The live bytes are TCMalloc's own count, read by the process before the core.
      expect(n.liveBytes).toBe(truth.currentAllocatedBytes)
      expect(n.namedBytes).toBeGreaterThanOrEqual(truth.objectBytes)
      expect(n.namedBytes / n.liveBytes).toBeGreaterThanOrEqual(0.9)
    })

    it('a block reached as an Item* and as a ListNode* is a conflict: reported with both names, not named', () => {
      const n = named[label]!
      expect(n.ofConflicts).toEqual([null])
      expect(n.conflicts.count).toBe(1)
      const [c] = truth.conflicts
      expect(n.conflicts.examples).toEqual([expect.stringMatching(new RegExp(`^object ${c!.address} is (Item|ListNode) and, by debug-info too, (Item|ListNode): named neither$`))])
      expect(n.conflicts.examples[0]).toContain('Item')
      expect(n.conflicts.examples[0]).toContain('ListNode')
    })
  })

  describe('the -O2 build (main split in hot and cold parts, local_list in registers and dead where main parks)', () => {
    const kindsO2 = [...new Set(truthO2.objects.map(o => o.kind))]
    it.each(kindsO2)('kind %s: precision 100 %', kind => {
      const byAddress = new Map(truthO2.objects.map(t => [Number(t.address), t]))
      const wrong = [...named['o2']!.byDwarf].filter(([, [, k]]) => k === kind).flatMap(([addr, [name]]) => (byAddress.get(addr)?.name === name ? [] : [`0x${addr.toString(16)} named ${name}, truth: ${byAddress.get(addr)?.name ?? 'none'}`]))
      expect(wrong.slice(0, 5)).toEqual([])
    })

    it('every object is named as the truth says but local_list\'s, which no location reaches (gdb: <optimized out>)', () => {
      const n = named['o2']!
      const wrong = truthO2.objects.flatMap((t, i) => {
        const got = n.ofTruth[i]!
        const want = t.root === 'local_list' ? {name: null, kind: null, via: ''} : {name: t.name, kind: t.kind, via: t.via ?? 'debug-info'}
        return got.name === want.name && got.kind === want.kind && got.via === want.via ? [] : [`${t.address} ${t.name} (${t.root}): ${JSON.stringify(got)}`]
      })
      expect(wrong.slice(0, 5)).toEqual([])
      // local_bag is on the stack at DW_OP_fbreg in main, whose code is two ranges (DW_AT_ranges).
      expect(truthO2.objects.filter(t => t.root === 'local_bag').length).toBe(36)
      expect(n.namedBytes / n.liveBytes).toBeGreaterThanOrEqual(0.9)
      expect(n.notes.some(m => /^\[dwarf\] \d+ variables with locations this tier does not follow/.test(m))).toBe(true)
    })
  })

  it('says where the DWARF came from and what it reached (g_tree, g_list, g_registry, g_shape, the two g_conflict_ pointers, and g_truth\'s const char* fields)', () => {
    expect(named['with-g']!.notes.some(m => /^\[dwarf\] DWARF of typesdemo \(in the file\): 7 typed globals and \d+ locals in 1 frames reach /.test(m))).toBe(true)
    expect(named['debug-file']!.notes.some(m => m.startsWith('[dwarf] DWARF of typesdemo (typesdemo.debug)'))).toBe(true)
  })

  it('a Circle held as a Shape* keeps its vtable name, agreed with (no conflict), and its own members are followed', () => {
    const i = truth.objects.findIndex(o => o.name === 'Circle')
    expect(truth.objects[i]!.via).toBe('vtable')
    expect(named['with-g']!.ofTruth[i]).toEqual({name: 'Circle', kind: 'object', via: 'vtable'})
    // Its ring (a Circle member, not a Shape one): the three ListNodes the program made just before
    // it (truth is in allocation order), named by the DWARF tier through Circle's type.
    const ring = truth.objects.slice(i - 3, i)
    expect(ring.map(o => o.name)).toEqual(['ListNode', 'ListNode', 'ListNode'])
    for (let k = i - 3; k < i; k++) expect(named['with-g']!.ofTruth[k]).toEqual({name: 'ListNode', kind: 'object', via: 'debug-info'})
    expect(named['with-g']!.conflicts.examples.every(e => !e.includes('Circle') && !e.includes('Shape'))).toBe(true)
  })

  it('without the debug file, the tier names nothing', () => {
    expect(named['bare']!.byDwarf.size).toBe(0)
    expect(named['bare']!.notes.filter(m => m.startsWith('[dwarf]'))).toEqual([])
  })

  it('DWARF that does not parse is one note, and the analysis goes on without it', () => {
    const n = named['damaged']!
    expect(n.byDwarf.size).toBe(0)
    const dwarfNotes = n.notes.filter(m => m.startsWith('[dwarf]'))
    expect(dwarfNotes).toHaveLength(1)
    expect(dwarfNotes[0]).toMatch(/typesdemo: DWARF left out: \.debug_(info|abbrev): /)
  })
})
