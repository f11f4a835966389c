import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {classOfVtableSymbol, typeOfTypeinfoName} from '../../src/graph/demangle.js'
import {TypeNamer} from '../../src/graph/types.js'
import {nameObjects} from '../../src/graph/object-types.js'
import {scanHeapGraph} from '../../src/graph/scan.js'
import {modelHeap} from '../../src/allocators.js'
import {addr, fixtureIndex, openFixture} from '../helpers/fixture-core.js'

type Fixture = Awaited<ReturnType<typeof openFixture>>

describe('TypeNamer.demangle', () => {
  it('demangles Itanium names, special names as c++filt writes them', () => {
    expect(TypeNamer.demangle('_ZTVN3app5OrderE')).toBe('vtable for app::Order')
    expect(TypeNamer.demangle('_ZThn16_N3app6Widget4drawEv')).toBe('non-virtual thunk to app::Widget::draw()')
    expect(TypeNamer.demangle('_ZTv0_n24_N3app6WidgetD1Ev')).toBe('virtual thunk to app::Widget::~Widget()')
    expect(TypeNamer.demangle('_ZTch0_h16_N1A1fEv')).toBe('covariant return thunk to A::f()')
    expect(TypeNamer.demangle('_ZTTSd')).toBe('VTT for std::basic_iostream<char, std::char_traits<char> >')
    expect(TypeNamer.demangle('_ZN12_GLOBAL__N_14onceE')).toBe('(anonymous namespace)::once')
    expect(TypeNamer.demangle('_ZL10g_hooks_ok')).toBe('g_hooks_ok')
    expect(TypeNamer.demangle('_ZTSN3app3BoxIiEE')).toBe('typeinfo name for app::Box<int>')
    expect(TypeNamer.demangle('_Z3fooi')).toBe('foo(int)')
    expect(TypeNamer.demangle('_ZN3app5OrderD0Ev')).toBe('app::Order::~Order()')
  })

  it('returns names that are not mangled, or do not demangle, unchanged', () => {
    // demangle_any itself answers these with the first underscore stripped ("start", "ZTV")
    for (const name of ['malloc', '_start', '__libc_malloc', '', '_ZTV', '_Z', '_ZTVN3app5Order', 'ZTVN3app5OrderE', '_ZTS\u00ff', '_ZTV\u0000x']) {
      expect(TypeNamer.demangle(name)).toBe(name)
    }
  })

  it('survives deep and long garbage', () => {
    expect(TypeNamer.demangle('_ZTS' + 'N'.repeat(5000))).toBe('_ZTS' + 'N'.repeat(5000))
    expect(typeof TypeNamer.demangle('_ZTS' + 'PFv'.repeat(2000))).toBe('string')
    expect(TypeNamer.demangle('_ZTVN3app5OrderE')).toBe('vtable for app::Order') // still usable afterwards
  })

  it('takes class names out of vtable symbols and typeinfo name strings', () => {
    expect(classOfVtableSymbol('_ZTVN3app5OrderE')).toBe('app::Order')
    expect(classOfVtableSymbol('_ZTVN3app3BoxIiEE')).toBe('app::Box<int>')
    expect(classOfVtableSymbol('_ZTVN3app5OrderE.localalias')).toBe('app::Order')
    expect(classOfVtableSymbol('_ZTVN12_GLOBAL__N_13AnoE')).toBe('(anonymous namespace)::Ano')
    expect(classOfVtableSymbol('_ZTV')).toBeNull()
    expect(classOfVtableSymbol('_ZTIN3app5OrderE')).toBeNull()
    expect(typeOfTypeinfoName('N3app5OrderE')).toBe('app::Order')
    expect(typeOfTypeinfoName('*N12_GLOBAL__N_13AnoE')).toBe('(anonymous namespace)::Ano')
    expect(typeOfTypeinfoName('NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE')).toBe(
      'std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >',
    )
    expect(typeOfTypeinfoName('')).toBeNull()
    expect(typeOfTypeinfoName('N3app 5OrderE')).toBeNull()
    expect(typeOfTypeinfoName('\u0001\u0002')).toBeNull()
  })
})

const CORES = ['v2.10-shared', 'v2.10-stripped']
const present = new Set(fixtureIndex().map(e => e.id))

it('the fixture cores this test needs are listed', () => {
  for (const id of CORES) expect(present.has(id), `fixtures/cores/${id}`).toBe(true)
})

// The other configurations (minimal, static, preload) name by symbol like v2.10-shared; run them too when present.
const ALL = [...CORES, ...[...present].filter(id => !CORES.includes(id)).sort()]

describe.each(ALL.filter(id => present.has(id)))('on core %s', id => {
  let f: Fixture
  let namer: TypeNamer
  // Without vtable symbols: a stripped executable whose debug file is not found. v2.10-stripped
  // ships heapdemo.debug beside it (.gnu_debuglink), so its symbols are there unless it is missing.
  let stripped = false

  beforeAll(async () => {
    f = await openFixture(id)
    namer = new TypeNamer(f.program)
    stripped = id.endsWith('-stripped') && f.program.executable?.debug == null
  })

  it.runIf(id.endsWith('-stripped'))('finds the stripped executable\'s debug file by its .gnu_debuglink', () => {
    expect(f.program.executable?.file?.isStripped).toBe(true)
    expect(f.program.executable?.debug).toMatchObject({how: 'debuglink', path: expect.stringMatching(/heapdemo\.debug$/)})
  })
  afterAll(() => f?.core.close())

  const u64 = (a: number) => {
    const v = f.core.memory.readU64(a)
    if (v === undefined) throw new Error(`0x${a.toString(16)} not in core`)
    return v
  }
  const i64 = (a: number) => BigInt.asIntN(64, f.core.memory.readU64Big(a)!)

  it('names every object of the ground truth with a class, and only those', () => {
    const classes = f.truth.objects.filter(o => o.class !== null)
    expect(classes.length).toBeGreaterThan(10)
    expect(new Set(classes.map(o => o.class))).toEqual(
      new Set(['app::Order', 'app::Customer', 'app::Box<int>', 'app::Widget', 'app::Node', 'app::Inventory', 'app::Registry', 'app::Session']),
    )
    for (const o of f.truth.objects) {
      const word = u64(addr(o.address))
      expect(namer.classOfVtablePointer(word), `${o.name} at ${o.address}`).toBe(o.class)
      expect(namer.howNamed(word), o.name).toBe(o.class === null ? null : stripped ? 'typeinfo' : 'symbol')
    }
  })

  it('does not name an object by the vptr of its secondary base (multiple inheritance)', () => {
    const widgets = f.truth.objects.filter(o => o.class === 'app::Widget')
    expect(widgets.length).toBeGreaterThan(0)
    for (const o of widgets) {
      const base = addr(o.address)
      const primary = u64(base)
      const typeinfo = u64(primary - 8)
      // A second vptr of the same complete object: same typeinfo, offset-to-top = -(its offset).
      const secondary: {offset: number; vptr: number}[] = []
      for (let off = 8; off + 8 <= o.size; off += 8) {
        const v = u64(base + off)
        if (f.core.memory.readU64(v - 8) === typeinfo) secondary.push({offset: off, vptr: v})
      }
      expect(secondary.map(s => s.offset)).toEqual([16]) // Serializable after Drawable's vptr + int
      for (const s of secondary) {
        expect(i64(s.vptr - 16)).toBe(BigInt(-s.offset))
        expect(namer.classOfVtablePointer(s.vptr)).toBeNull()
        expect(namer.howNamed(s.vptr)).toBeNull()
        // It does lie in Widget's vtable group, which the symbol check had to reject.
        if (!stripped) expect(namer.vtableSymbolAt(s.vptr)?.symbol).toBe('_ZTVN3app6WidgetE')
      }
    }
  })

  it('rejects words near an address point, garbage and non-module addresses without throwing', () => {
    const order = addr(f.truth.objects.find(o => o.class === 'app::Order')!.address)
    const vptr = u64(order)
    expect(namer.classOfVtablePointer(vptr)).toBe('app::Order')
    for (const w of [vptr - 8, vptr + 8, vptr - 16, vptr + 1, vptr + 4, order, order + 8,
      0, 7, 8, 16, -16, 2 ** 53 + 8, 2 ** 63, Number.NaN, Number.POSITIVE_INFINITY, 0.5]) {
      expect(namer.classOfVtablePointer(w), `0x${w.toString(16)}`).toBeNull()
      expect(namer.howNamed(w)).toBeNull()
    }
    if (!stripped) {
      const sym = namer.vtableSymbolAt(vptr)!
      expect(sym.symbol).toBe('_ZTVN3app5OrderE')
      expect(vptr - sym.start).toBe(16)
      expect(namer.classOfVtablePointer(sym.start)).toBeNull()
      expect(namer.classOfVtablePointer(sym.end)).toBeNull()
    }
  })

  it('agrees with the typeinfo chain alone on every live allocation', () => {
    const chain = new TypeNamer(f.program, {useSymbols: false})
    let named = 0
    for (const [a] of f.truth.live) {
      const word = f.core.memory.readU64(addr(a))
      if (word === undefined) continue
      const name = namer.classOfVtablePointer(word)
      expect(chain.classOfVtablePointer(word), a).toBe(name)
      if (name !== null) {
        named++
        expect(chain.howNamed(word)).toBe('typeinfo')
      }
    }
    // More than the manifest where the allocator's own objects have vtables: with TCMalloc linked
    // statically, its heap-allocated TCMallocImplementation (a MallocExtension) is named too.
    expect(named).toBeGreaterThanOrEqual(f.truth.objects.filter(o => o.class !== null).length)
  })

  it('reads the name strings from the module file when the core lacks them', () => {
    // gcore leaves out read-only file-backed mappings, .rodata with the typeinfo names included.
    const vptr = u64(addr(f.truth.objects.find(o => o.class === 'app::Order')!.address))
    const namePtr = u64(u64(vptr - 8) + 8)
    expect(f.core.memory.isReadable(namePtr, 13)).toBe(false)
    expect(new TypeNamer(f.program, {useSymbols: false}).classOfVtablePointer(vptr)).toBe('app::Order')
  })

  it('sweeps every word of the core without throwing; whatever it names is a primary address point', () => {
    const names = new Map<string, number>()
    for (const s of f.core.memory.segments) {
      const buf = f.core.memory.readBytes(s.start, s.end - s.start)
      if (!buf) continue
      for (let i = 0; i + 8 <= buf.length; i += 8) {
        const w = buf.readUInt32LE(i) + buf.readUInt32LE(i + 4) * 0x1_0000_0000
        const name = namer.classOfVtablePointer(w)
        if (name === null) continue
        names.set(name, (names.get(name) ?? 0) + 1)
        // offset-to-top 0, from the core when it holds it
        const ott = f.core.memory.readU64(w - 16)
        if (ott !== undefined) expect(ott).toBe(0)
      }
    }
    for (const c of ['app::Order', 'app::Customer', 'app::Box<int>', 'app::Widget', 'app::Node', 'app::Inventory']) {
      expect(names.has(c), c).toBe(true)
    }
    for (const name of names.keys()) expect(name).toMatch(/^[A-Za-z_(][\w:<>,*&() .~-]*$/)
  })
})

// nameObjects keeps a direct-mapped cache of module words (vtables) by bits 3–12 of the word: two
// module words in one slot must each get their own type, as naming each word alone does.
describe('nameObjects with module words that share a cache slot', () => {
  it('names each word as the namer does, alternating words of one slot; module addresses as a plain scan', async () => {
    const {program} = await openFixture('v2.18.1-shared')
    const heap = modelHeap(program)
    const g = scanHeapGraph(program, heap)
    const namer = new TypeNamer(program)
    const vtables = [...new Set(g.firstWords.filter(w => w > 0 && namer.isModuleAddress(w) && namer.classOfVtablePointer(w) !== null))]
    expect(vtables.length).toBeGreaterThan(3)
    // Each vtable word, then the module words 8 KiB either side of it (the same slot), over and over.
    const words: number[] = []
    for (const w of vtables) for (const other of [w - 8192, w + 8192]) if (namer.isModuleAddress(other)) words.push(w, other, w, other)
    words.push(...vtables.slice(0, 2).flatMap(w => [w, w + 8192 * 1024, w]))
    const types = nameObjects(Float64Array.from(words), new TypeNamer(program))
    const names = Array.from(types.typeOf, id => (id === 0 ? null : types.names[id - 1]))
    expect(names).toEqual(words.map(w => (namer.isModuleAddress(w) ? namer.classOfVtablePointer(w) : null)))
    expect(new Set(names.filter(n => n !== null)).size).toBe(vtables.length)

    // The namer remembers the last gap between module mappings: each edge of every mapping, and
    // the heap words, in an order that moves between gaps and mappings, against a plain scan.
    const mappings = program.core.modules.flatMap(m => m.mappings)
    const inAny = (a: number) => mappings.some(f => a >= f.start && a < f.end)
    const edges = mappings.flatMap(f => [f.start - 1, f.start, f.end - 1, f.end, f.end + 4096])
    const heapWords = g.firstWords.filter(w => w > 0).slice(0, 2000)
    const asked = [...edges, ...heapWords, ...edges.reverse(), ...heapWords.reverse()]
    const fresh = new TypeNamer(program)
    expect(asked.map(a => fresh.isModuleAddress(a))).toEqual(asked.map(inAny))
    expect(asked.filter(inAny).length).toBeGreaterThan(mappings.length)
    program.core.close()
  })
})

// Type ids take 16 bits while they fit (2 bytes an object slot less in the analysis and the index),
// 32 once a program has more than 65,535 classes: the ids already given must survive the widening.
describe('nameObjects with more classes than 16-bit ids hold', () => {
  it('16-bit ids for a real core; 32-bit ids, the first ones kept, past 65,535 names', async () => {
    const {program} = await openFixture('v2.18.1-shared')
    const heap = modelHeap(program)
    const g = scanHeapGraph(program, heap)
    expect(nameObjects(g.firstWords, new TypeNamer(program)).typeOf).toBeInstanceOf(Uint16Array)

    // A namer over the same core that calls every module word a class of its own.
    class EveryWordAClass extends TypeNamer {
      override classOfVtablePointer(word: number): string | null {
        return `C${word}`
      }
    }
    const mapping = program.core.modules.flatMap(m => m.mappings).find(f => f.end - f.start >= 8 * 70_000)!
    const words = Float64Array.from({length: 70_000}, (_, i) => mapping.start + 8 * i)
    const types = nameObjects(words, new EveryWordAClass(program))
    expect(types.typeOf).toBeInstanceOf(Uint32Array)
    expect(types.names.length).toBe(70_000)
    expect(Array.from(types.typeOf).every((id, i) => id === i + 1 && types.names[id - 1] === `C${words[i]}`)).toBe(true)
    program.core.close()
  })
})
