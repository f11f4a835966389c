import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, test} from 'vitest'
import {Core} from '../../src/core/core.js'
import {demangle} from '../../src/elf/demangle.js'
import {ElfFile} from '../../src/elf/elf-file.js'
import {findDebugFile} from '../../src/elf/find-debug-file.js'
import {TypeNamer} from '../../src/graph/types.js'
import {describeAddress} from '../../src/program/describe-address.js'
import {describeSymbolic, Program, type ProgramOptions} from '../../src/program/program.js'
import {FIXTURES, addr, fixtureCorePath, fixtureFlags, fixtureIndex, openFixture, type Truth} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'
import {have, innermostHolding, nmSized, readelfSections} from '../elf/tools.js'

// Names of addresses on the v2.10 fixture cores, measured against gdb and binutils. The v2.10
// cores ran on Debian 12's libc and libstdc++: where the machine has those very files (same
// build-id), they are found at the paths the core names; elsewhere the module has no file and
// the names say module+0x…, which the tests below accept as what gdb would say too.

// created when a test of this file runs (a fully skipped file makes none), under the run's temp root
let tmp = ''
beforeAll(() => {
  tmp = testTemp('names-')
})

/** True (and says so) when a tool a test measures with is not installed: that test is skipped. */
function lacks(...tools: string[]): boolean {
  const missing = tools.filter(t => !have(t))
  if (missing.length > 0) console.log(`names.test: skipping the tests that need ${missing.join(', ')}: not installed`)
  return missing.length > 0
}
const noGdb = lacks('gdb')
const noBinutils = lacks('nm', 'readelf', 'c++filt', 'objcopy')

const shared = fixtureIndex().find(f => f.id === 'v2.10-shared')!
const stripped = fixtureIndex().find(f => f.id === 'v2.10-stripped')!
const NO_DEBUG: ProgramOptions = {debugDirectories: []}

async function open(id: string, options: ProgramOptions): Promise<Program> {
  return Program.load(Core.open(await fixtureCorePath(id)), options)
}

/** gdb's `info symbol` answer for each address: [name, offset] or null for "No symbol matches". */
function gdbInfoSymbol(exe: string, core: string, addresses: number[], debugDir: string | null): ([string, number] | null)[] {
  const args = ['-batch', '-nx', ...(debugDir === null ? ['-ex', 'set debug-file-directory /nonexistent'] : []),
    '-ex', `file ${exe}`, '-ex', `core-file ${core}`, ...addresses.flatMap(a => ['-ex', `info symbol 0x${a.toString(16)}`])]
  const out = execFileSync('gdb', args, {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: {...process.env, LC_ALL: 'C'}})
  const answers = out.split('\n').flatMap(line => {
    if (line.startsWith('No symbol matches')) return [null]
    const m = /^(.*?)(?: \+ (\d+))? in section \S+/.exec(line)
    return m ? [[m[1], m[2] ? Number(m[2]) : 0] as [string, number]] : []
  })
  expect(answers).toHaveLength(addresses.length)
  return answers
}

describe('thread rips', () => {
  test.skipIf(noGdb)('are named as gdb names them, with and without the machine\'s debug files', async () => {
    const corePath = await fixtureCorePath(shared.id)
    for (const debug of [true, false]) {
      const program = await open(shared.id, {...fixtureFlags(shared), ...(debug ? {} : NO_DEBUG)})
      const rips = program.core.threads.map(t => t.pc)
      const gdb = gdbInfoSymbol(fixtureFlags(shared).exe, corePath, rips, debug ? '' : null)
      rips.forEach((rip, i) => {
        const ours = program.symbolize(rip)!
        expect(ours.symbol ? [demangle(ours.symbol.name), ours.offset] : null, `rip 0x${rip.toString(16)}`).toEqual(gdb[i])
      })
      program.core.close()
    }
  })

  test.skipIf(noBinutils)('without debug files: the symbol whose [value, value+size) holds the rip, else module+0x…', async () => {
    const program = await open(shared.id, {...fixtureFlags(shared), ...NO_DEBUG})
    let outside = 0
    for (const t of program.core.threads) {
      const loaded = program.moduleAt(t.pc)!
      const mod = path.basename(loaded.module.path)
      const file = loaded.file
      const holder = file ? innermostHolding(nmSized(file.path, file.isStripped), t.pc - loaded.module.loadBias) : undefined
      const label = describeSymbolic(program.symbolize(t.pc))
      if (holder) {
        expect(label).toBe(`${demangle(holder.name)}+0x${(t.pc - loaded.module.loadBias - holder.value).toString(16)} (${mod})`)
      } else {
        outside++
        expect(label).toBe(`${mod}+0x${(t.pc - loaded.module.base).toString(16)}`)
      }
    }
    // waiting worker threads sit in a static libc function that .dynsym does not name (gdb agrees)
    if (program.moduleAt(program.core.threads[1].pc)!.file) expect(outside).toBeGreaterThan(0)
    program.core.close()
  })
})

describe.each(fixtureIndex().map(e => e.id))('on core %s', id => {
  test('every frame of gdb\'s backtraces in the executable is named as gdb named it (truth.gdbStacks)', async () => {
    const {program, truth} = await openFixture(id)
    const exe = program.executable!
    let compared = 0
    for (const stack of truth.gdbStacks) {
      for (const frame of stack.frames) {
        const pc = addr(frame.pc)
        if (frame.type !== 'normal' || frame.function === null || program.moduleAt(pc) !== exe) continue
        // a caller's pc is a return address, which may lie just past the call's function: gdb names pc-1
        const ours = program.symbolize(frame.level > 0 ? pc - 1 : pc)
        expect(ours?.symbol, `${frame.pc} ${frame.function}`).toBeTruthy()
        const name = demangle(ours!.symbol!.name)
        // c++filt (and so gdb) writes a template function's return type first; cpp_demangle does not
        if (name !== frame.function) expect(frame.function, frame.pc).toBe(`${frame.function.slice(0, -name.length - 1)} ${name}`)
        compared++
      }
    }
    expect(compared).toBeGreaterThanOrEqual(truth.gdbStacks.length) // main, and each worker's frames
    program.core.close()
  })
})

describe('globals and demangled names', () => {
  test('a global holding a heap object is name+0x0 (module); an address past a symbol\'s end is not that symbol', async () => {
    const program = await open(shared.id, fixtureFlags(shared))
    const exe = program.executable!
    const globals = ['g_only_global', 'g_registry']
    for (const name of globals) {
      const sym = exe.file!.symbolByName(name)!
      const at = exe.module.loadBias + sym.value
      expect(describeAddress(program, at)).toMatchObject({kind: 'module', symbol: name, offset: 0, label: `${name}+0x0 (heapdemo)`})
      expect(describeAddress(program, at + sym.size - 1)).toMatchObject({symbol: name, offset: sym.size - 1})
      const past = describeAddress(program, at + sym.size)
      expect(past.kind === 'module' && past.symbol).not.toBe(name)
    }
    // a static variable (_ZL…) reads as c++filt writes it
    const hooks = exe.file!.symbolByName('_ZL10g_hooks_ok')!
    expect(describeAddress(program, exe.module.loadBias + hooks.value)).toMatchObject({symbol: 'g_hooks_ok', label: 'g_hooks_ok+0x0 (heapdemo)'})
    program.core.close()
  })

  test.skipIf(noBinutils)('magic words the program put in its globals are named by the nm -S symbol that holds them', async () => {
    const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, shared.id, 'truth.json'), 'utf8')) as Truth
    const program = await open(shared.id, fixtureFlags(shared))
    const exe = program.executable!
    const symbols = nmSized(exe.file!.path, false)
    const inGlobals = truth.magic.filter(x => x.where === 'global')
    expect(inGlobals.length).toBeGreaterThan(0)
    for (const m of inGlobals) {
      const a = addr(m.address)
      const holder = innermostHolding(symbols, a - exe.module.loadBias)!
      expect(describeAddress(program, a)).toMatchObject({kind: 'module', symbol: demangle(holder.name), offset: a - exe.module.loadBias - holder.value})
    }
    program.core.close()
  })

  test.skipIf(noBinutils)('around std::cerr (0x110 bytes): each word is named by the symbol holding it (nm -S), else by its section', async () => {
    const program = await open(shared.id, {...fixtureFlags(shared), ...NO_DEBUG})
    const lib = program.modules.find(m => /^libstdc\+\+/.test(path.basename(m.module.path)))!
    const cerr = lib.file?.symbolByName('_ZSt4cerr')
    if (!cerr) {
      console.log(`skipped: this machine has no libstdc++ with the build-id ${lib.module.buildId} that the core used`)
      return
    }
    expect(cerr.size).toBe(0x110)
    const mod = path.basename(lib.module.path)
    const symbols = nmSized(lib.file!.path, true)
    const bss = readelfSections(lib.file!.path).get('.bss')!
    let gaps = 0
    for (let vaddr = cerr.value - 0x200; vaddr < cerr.value + 0x400; vaddr += 8) {
      const holder = innermostHolding(symbols, vaddr)
      const expected = holder
        ? `${demangle(holder.name)}+0x${(vaddr - holder.value).toString(16)} (${mod})`
        : `.bss+0x${(vaddr - bss.addr).toString(16)} (${mod})`
      if (!holder) gaps++
      expect(describeAddress(program, lib.module.loadBias + vaddr)).toMatchObject({kind: 'module', label: expected})
    }
    expect(describeAddress(program, lib.module.loadBias + cerr.value + 8)).toMatchObject({symbol: 'std::cerr', offset: 8, label: `std::cerr+0x8 (${mod})`})
    expect(gaps).toBeGreaterThan(0) // padding between the streams: no symbol, so no name of one
    program.core.close()
  })

  test.skipIf(noBinutils)('every data symbol of the executable demangles as c++filt does', () => {
    const names = [...new Set(nmSized(fixtureFlags(shared).exe, false).map(s => s.name).filter(n => n.startsWith('_Z')))]
    const filt = execFileSync('c++filt', {input: names.join('\n'), encoding: 'utf8'}).trimEnd().split('\n')
    expect(names.length).toBeGreaterThan(20)
    // data and plain functions; templates differ only in style (c++filt writes return types)
    const plain = names.map((n, i) => [n, filt[i]]).filter(([, f]) => !f.includes('<'))
    expect(plain.length).toBeGreaterThan(20)
    for (const [n, f] of plain) expect(demangle(n), n).toBe(f)
  })
})

describe('separate debug files', () => {
  const unstrippedExe = fixtureFlags(shared).exe // the same build as the stripped one (equal build-ids)
  const committedDebug = path.join(FIXTURES, stripped.id, 'heapdemo.debug')

  /**
   * The stripped fixture's flags with its executable copied alone into a folder: a debug file
   * committed beside the fixture (heapdemo.debug) must not be found by debuglink where a test
   * wants no debug file, or only the one it placed.
   */
  function strippedAlone(): {exe: string; tcmalloc?: string} {
    const exe = path.join(tmp, 'alone', 'heapdemo')
    if (!fs.existsSync(exe)) {
      fs.mkdirSync(path.dirname(exe), {recursive: true})
      fs.copyFileSync(fixtureFlags(stripped).exe, exe)
    }
    return {...fixtureFlags(stripped), exe}
  }

  /** Names of every sized symbol of the executable in the stripped core, under given options. */
  async function exeNames(options: ProgramOptions): Promise<string[]> {
    const program = await open(stripped.id, options)
    const exe = program.executable!
    const reference = ElfFile.load(unstrippedExe)
    const names = reference.symbolsByPrefix('').filter(s => s.size > 0 && s.value > 0)
      .map(s => describeSymbolic(program.symbolize(exe.module.loadBias + s.value + Math.floor(s.size / 2))))
    program.core.close()
    return names
  }

  /** The debug file for the stripped executable: the fixture's, else the unstripped build itself (same build-id, full .symtab). */
  const debugSource = () => (fs.existsSync(committedDebug) ? committedDebug : unstrippedExe)

  test('a stripped executable is named exactly like the unstripped build once its debug file is found by build-id under --sysroot', async () => {
    expect(ElfFile.load(fixtureFlags(stripped).exe).isStripped).toBe(true)
    const truth = await exeNames({...fixtureFlags(stripped), exe: unstrippedExe, ...NO_DEBUG})
    expect(truth.filter(n => n.startsWith('g_only_global+'))).toHaveLength(1)

    const without = await exeNames({...strippedAlone(), ...NO_DEBUG})
    expect(without).not.toEqual(truth)
    expect(without.some(n => n.startsWith('g_only_global+'))).toBe(false)

    const id = ElfFile.load(fixtureFlags(stripped).exe).buildId!
    const sysroot = path.join(tmp, 'sysroot-build-id')
    const debugPath = path.join(sysroot, 'usr/lib/debug/.build-id', id.slice(0, 2), `${id.slice(2)}.debug`)
    fs.mkdirSync(path.dirname(debugPath), {recursive: true})
    fs.copyFileSync(debugSource(), debugPath)
    const withDebug = await exeNames({...strippedAlone(), sysroot, debugDirectories: ['/usr/lib/debug']})
    expect(withDebug).toEqual(truth)

    const program = await open(stripped.id, {...strippedAlone(), sysroot})
    expect(program.executable!.debug).toEqual({path: debugPath, how: 'build-id'})
    program.core.close()
  })

  test('a stripped executable\'s types come from its debug file\'s vtable symbols', async () => {
    const truth = JSON.parse(fs.readFileSync(path.join(FIXTURES, stripped.id, 'truth.json'), 'utf8')) as Truth
    const id = ElfFile.load(fixtureFlags(stripped).exe).buildId!
    const debugDir = path.join(tmp, 'debug-dir')
    const debugPath = path.join(debugDir, '.build-id', id.slice(0, 2), `${id.slice(2)}.debug`)
    fs.mkdirSync(path.dirname(debugPath), {recursive: true})
    fs.copyFileSync(debugSource(), debugPath)
    for (const [dirs, how] of [[[], 'typeinfo'], [[debugDir], 'symbol']] as const) {
      const program = await open(stripped.id, {...strippedAlone(), debugDirectories: [...dirs]})
      const namer = new TypeNamer(program)
      const classes = truth.objects.filter(o => o.class !== null)
      expect(classes.length).toBeGreaterThan(10)
      for (const o of classes) {
        const word = program.core.memory.readU64(addr(o.address))!
        expect(namer.classOfVtablePointer(word), o.name).toBe(o.class)
        expect(namer.howNamed(word), o.name).toBe(how)
      }
      program.core.close()
    }
  })

  test('a module file with no section headers left (sstrip) names sections by its debug file\'s headers', () => {
    const bytes = Buffer.from(fs.readFileSync(fixtureFlags(stripped).exe))
    bytes.writeBigUInt64LE(0n, 40) // e_shoff
    bytes.writeUInt16LE(0, 60) // e_shnum
    bytes.writeUInt16LE(0, 62) // e_shstrndx
    const bare = ElfFile.fromBuffer(bytes, 'sstripped heapdemo')
    expect(bare.sections).toHaveLength(0)
    const debug = ElfFile.load(debugSource())
    const bss = debug.section('.bss')!
    expect(bare.sectionAt(bss.addr + 8)).toBeUndefined()
    bare.useDebugFile(debug)
    expect(bare.sectionAt(bss.addr + 8)).toMatchObject({section: {name: '.bss'}, offset: 8})
    const only = debug.symbolByName('g_only_global')!
    expect(bare.symbolAt(only.value)).toEqual({symbol: only, offset: 0})
  })

  test('a debug file of another build is not used', async () => {
    const id = ElfFile.load(fixtureFlags(stripped).exe).buildId!
    const sysroot = path.join(tmp, 'sysroot-wrong')
    const debugPath = path.join(sysroot, 'usr/lib/debug/.build-id', id.slice(0, 2), `${id.slice(2)}.debug`)
    fs.mkdirSync(path.dirname(debugPath), {recursive: true})
    fs.copyFileSync(path.join(FIXTURES, 'v2.10-static', 'heapdemo'), debugPath) // a .symtab, another build-id
    const program = await open(stripped.id, {...strippedAlone(), sysroot})
    expect(program.executable!.debug).toBeNull()
    program.core.close()
  })

  test.skipIf(noBinutils)('found by .gnu_debuglink beside the file, in .debug/, and under --sysroot\'s debug folder', async () => {
    // A stripped copy that carries a debuglink (Debian's strip does not add one): objcopy writes
    // the link with the CRC-32 of the debug file, as dh_strip does.
    const work = path.join(tmp, 'debuglink')
    fs.mkdirSync(work, {recursive: true})
    const debug = path.join(work, 'heapdemo.debug')
    fs.copyFileSync(debugSource(), debug)
    const exe = path.join(work, 'bin', 'heapdemo')
    fs.mkdirSync(path.dirname(exe))
    execFileSync('objcopy', ['--strip-all', `--add-gnu-debuglink=${debug}`, unstrippedExe, exe])
    expect(ElfFile.load(exe).debugLink?.file).toBe('heapdemo.debug')
    const truth = await exeNames({...fixtureFlags(stripped), exe: unstrippedExe, ...NO_DEBUG})

    const core = Core.open(await fixtureCorePath(stripped.id))
    const corePath = core.modules.find(m => path.basename(m.path) === 'heapdemo')!.path
    core.close()
    const sysroot = path.join(work, 'sysroot')
    const places = [
      path.join(work, 'bin', 'heapdemo.debug'),
      path.join(work, 'bin', '.debug', 'heapdemo.debug'),
      path.join(sysroot, 'usr/lib/debug', path.dirname(corePath), 'heapdemo.debug'),
    ]
    for (const place of places) {
      fs.mkdirSync(path.dirname(place), {recursive: true})
      fs.renameSync(debug, place)
      const options = {...fixtureFlags(stripped), exe, sysroot, debugDirectories: ['/usr/lib/debug']}
      expect(await exeNames(options), place).toEqual(truth)
      const program = await open(stripped.id, options)
      expect(program.executable!.debug).toEqual({path: place, how: 'debuglink'})
      program.core.close()
      fs.renameSync(place, debug)
    }
    // a file of that name with other contents (CRC and build-id differ) is refused
    fs.copyFileSync(path.join(FIXTURES, 'v2.10-static', 'heapdemo'), places[0])
    const program = await open(stripped.id, {...fixtureFlags(stripped), exe, ...NO_DEBUG})
    expect(program.executable!.debug).toBeNull()
    program.core.close()
  })

  test.skipIf(noBinutils)('without build-ids, a debuglink target is taken only when its CRC-32 is the one the link records', () => {
    const work = path.join(tmp, 'crc')
    fs.mkdirSync(work, {recursive: true})
    const debug = path.join(work, 'heapdemo.debug')
    execFileSync('objcopy', ['--remove-section', '.note.gnu.build-id', debugSource(), debug])
    const exe = path.join(work, 'heapdemo')
    execFileSync('objcopy', ['--strip-all', '--remove-section', '.note.gnu.build-id', `--add-gnu-debuglink=${debug}`, unstrippedExe, exe])
    const file = ElfFile.load(exe)
    expect([file.buildId, ElfFile.load(debug).buildId]).toEqual([null, null])
    const found = findDebugFile(file, '/anywhere/heapdemo', {debugDirectories: []})
    expect(found).toMatchObject({how: 'debuglink', path: debug})
    expect(found.file?.symbolByName('g_only_global')).toBeDefined()
    fs.appendFileSync(debug, Buffer.from([0])) // same name, other bytes
    const refused = findDebugFile(file, '/anywhere/heapdemo', {debugDirectories: []})
    expect(refused.file).toBeNull()
    if (!refused.file) expect(refused.tried).toEqual([expect.stringMatching(/heapdemo\.debug: CRC-32 [0-9a-f]+ is not the [0-9a-f]+ that \.gnu_debuglink records$/)])
  })
})
