import path from 'node:path'
import {TomaError} from '../errors.js'
import type {Core} from '../core/core.js'
import type {Module} from '../core/modules.js'
import {AT_ENTRY} from '../core/process-info.js'
import {SHF_EXECINSTR} from '../elf/constants.js'
import {demangle} from '../elf/demangle.js'
import {ElfFile, type ElfSymbol} from '../elf/elf-file.js'
import type {KnownFiles} from '../elf/file-identity.js'
import {findDebugFile} from '../elf/find-debug-file.js'
import {findModuleFile} from '../elf/find-module-file.js'
import {resolveModuleName} from '../elf/resolve-module-name.js'
import {useLinkMapModules} from './link-map-modules.js'
import type {CompressedCore} from '../input/uncompressed-core.js'


export interface ProgramOptions {
  exe?: string
  tcmalloc?: string
  sysroot?: string
  solibSearchPath?: string[]
  /** Where separate debug files are looked for (default /usr/lib/debug; [] looks nowhere). */
  debugDirectories?: string[]
  /** The compressed file the core was decompressed from, when it was. */
  compressed?: CompressedCore | null
  /** Module files an index was made from: found again by identity, their build-ids not read (ElfFile.loadKnown). */
  knownFiles?: KnownFiles
}

/** A module of the core together with its file on disk, when found. */
export interface LoadedModule {
  module: Module
  file: ElfFile | null
  /** How the file was found, or why not. */
  how: string
  /** The file's build-id was compared with the core's and matched. */
  verified: boolean
  /** The separate debug file whose symbols a stripped file uses, and how it was found. */
  debug: {path: string; how: 'build-id' | 'debuglink'} | null
}

export interface SymbolicAddress {
  module: LoadedModule
  symbol: ElfSymbol | null
  /** The data section holding the address when no symbol does (`.bss`, `.data`, …). */
  section: string | null
  /** Offset from the symbol, else from the section, else from the module base. */
  offset: number
}

/**
 * The process of a core together with its module files: where each module's file is, and
 * symbols both ways (name → process address, address → module + symbol + offset).
 */
export class Program {
  readonly modules: LoadedModule[]
  readonly executable: LoadedModule | undefined

  /**
   * @param flagFiles the files --exe and --tcmalloc named, as absolute paths (a bare name
   *   resolved), for later commands that reopen the core from another folder
   */
  private constructor(
    readonly core: Core,
    modules: LoadedModule[],
    readonly flagFiles: {exe?: string; tcmalloc?: string} = {},
    /** The compressed file given for the core (its decompressed copy is `core`), or null. */
    readonly compressed: CompressedCore | null = null,
    /** What it was loaded with: a worker thread loads the same program again from them (plain data). */
    readonly options: ProgramOptions = {},
  ) {
    this.modules = modules
    const exe = executableModule(core)
    this.executable = modules.find(m => m.module === exe)
  }

  /** The core file the user named: for a compressed core the compressed file, not its decompressed copy in .toma/cores. */
  get coreFile(): string {
    return this.compressed?.path ?? this.core.path
  }

  static load(core: Core, options: ProgramOptions = {}): Program {
    const open = (file: string) => ElfFile.loadKnown(file, options.knownFiles)
    // A core without NT_FILE: its modules through the loader's link_map, once found (Core.useLinkMapModules).
    if (core.modulesFrom.startsWith('nowhere')) {
      useLinkMapModules(core, {exe: options.exe, tcmalloc: options.tcmalloc, sysroot: options.sysroot, solibSearchPath: options.solibSearchPath, open})
    }
    const explicit = explicitFiles(core, options, open)
    const modules: LoadedModule[] = core.modules.map(module => {
      const found = findModuleFile(
        {corePath: module.path, buildId: module.buildId},
        // The files --exe and --tcmalloc name were opened (and parsed) to map them: not twice.
        {
          sysroot: options.sysroot,
          solibSearchPath: options.solibSearchPath,
          explicit: explicit.byModulePath,
          openExplicit: p => explicit.opened.get(p) ?? open(p),
          open,
        },
      )
      if (!found.file) return {module, file: null, how: found.reason, verified: false, debug: null}
      // A file an index was made with passed this check then (its headers are not read again).
      if (!found.file.checkedBefore && found.file.machine !== core.arch.machine) {
        return {module, file: null, how: `${found.path} is not for ${core.arch.name} (e_machine ${found.file.machine})`, verified: false, debug: null}
      }
      const debug = debugFileOnce(found.file, module.path, options)
      found.file.useDebugFileWhenNeeded(() => debug()?.file ?? null)
      return {
        module, file: found.file, how: found.how, verified: found.verified,
        get debug() {
          const d = debug()
          return d && {path: d.path, how: d.how}
        },
      }
    })
    return new Program(core, modules, explicit.flagFiles, options.compressed ?? null, options)
  }

  moduleAt(addr: number): LoadedModule | undefined {
    const m = this.core.moduleAt(addr)
    return m ? this.modules.find(l => l.module === m) : undefined
  }

  /**
   * What module, symbol and offset an address is: the symbol whose [value, value+size) holds it
   * (a PLT stub's is `symbol@plt`, ElfFile.pltStubAt);
   * outside every symbol, the data section holding it (`.bss+0x…`); else the offset from the
   * module's base. A module's image includes its .bss past the file-backed pages (an anonymous
   * mapping in the core). Undefined when no module's image holds the address.
   */
  symbolize(addr: number): SymbolicAddress | undefined {
    const loaded = this.moduleAt(addr) ?? this.moduleImageAt(addr)
    if (!loaded) return undefined
    const vaddr = addr - loaded.module.loadBias
    // A PLT stub has no symbol of its own: it is named after the GOT slot it jumps through, as gdb names it.
    const hit = loaded.file?.symbolAt(vaddr) ?? loaded.file?.pltStubAt(vaddr)
    if (hit) return {module: loaded, symbol: hit.symbol, section: null, offset: hit.offset}
    const inSection = loaded.file?.sectionAt(vaddr)
    if (inSection && (inSection.section.flags & SHF_EXECINSTR) === 0 && inSection.section.name !== '') {
      return {module: loaded, symbol: null, section: inSection.section.name, offset: inSection.offset}
    }
    return {module: loaded, symbol: null, section: null, offset: addr - loaded.module.base}
  }

  /**
   * The module whose image holds an address past its file-backed pages (its .bss, in the
   * anonymous mappings after them, or not dumped at all). Images do not overlap and each starts
   * at its module's base, so only the module with the highest base at or below the address can
   * hold it: only that one is asked (asking reads its file's headers).
   */
  private moduleImageAt(addr: number): LoadedModule | undefined {
    let below: LoadedModule | undefined
    for (const m of this.modules) if (m.module.base <= addr && (!below || m.module.base > below.module.base)) below = m
    return below?.file?.readVirtual(addr - below.module.loadBias, 1) !== undefined ? below : undefined
  }

  /** Process address of a defined symbol, searched in the given modules (default: all). */
  symbolAddress(name: string, within: LoadedModule[] = this.modules): {address: number; module: LoadedModule; symbol: ElfSymbol} | undefined {
    for (const m of within) {
      const s = m.file?.symbolByName(name)
      if (s) return {address: s.value + m.module.loadBias, module: m, symbol: s}
    }
    return undefined
  }
}

/**
 * People's text for an address: `std::cerr+0x8 (libstdc++.so.6)` inside a symbol (demangled),
 * `.bss+0x1a0 (memcached)` in a data section outside every symbol, `libc.so.6+0x85f16` otherwise.
 */
export function describeSymbolic(s: SymbolicAddress | undefined): string {
  if (!s) return '?'
  const mod = path.basename(s.module.module.path)
  const off = `+0x${s.offset.toString(16)}`
  if (s.symbol) return `${demangle(s.symbol.name)}${off} (${mod})`
  if (s.section) return `${s.section}${off} (${mod})`
  return `${mod}${off}`
}

const hasDwarf = (file: ElfFile) => file.section('.debug_info') !== undefined || file.section('.zdebug_info') !== undefined

/**
 * The separate debug file of a module file stripped of its symbols or of its DWARF, when one is
 * installed: looked for once, on the first call (by the file when it first needs symbols, or by
 * whoever asks what was found).
 */
function debugFileOnce(file: ElfFile, modulePath: string, options: ProgramOptions): () => {file: ElfFile; path: string; how: 'build-id' | 'debuglink'} | null {
  let found: {file: ElfFile; path: string; how: 'build-id' | 'debuglink'} | null | undefined
  return () => {
    if (found === undefined) {
      // `strip --strip-debug` keeps .symtab and drops the DWARF, which the debug file still has.
      const got = file.isStripped || !hasDwarf(file) ? findDebugFile(file, modulePath, {sysroot: options.sysroot, debugDirectories: options.debugDirectories}) : null
      found = got?.file ? {file: got.file, path: got.path, how: got.how} : null
    }
    return found
  }
}

/**
 * The main executable's module: the one holding AT_ENTRY, unless the process was started through
 * the dynamic loader (`ld-linux-x86-64.so.2 ./program`), where AT_ENTRY is the loader's own entry.
 */
function executableModule(core: Core): Module | undefined {
  const entry = core.auxv.get(AT_ENTRY)
  const atEntry = entry !== undefined ? core.moduleAt(Number(entry)) : undefined
  if (atEntry && !/^ld-linux/.test(path.basename(atEntry.path))) return atEntry
  return core.modules.find(m => !/\.so(\.|$)/.test(path.basename(m.path)) && !/^ld-linux/.test(path.basename(m.path))) ?? atEntry
}

/**
 * Maps --exe and --tcmalloc to the core's module paths. A bare name is first resolved like any
 * module file (resolveModuleName). The file must be mapped in the core: the module with its
 * build-id, or, when build-ids cannot be compared, the module of that soname or in that role.
 * A --tcmalloc file must hold TCMalloc (define its C entry point tc_malloc). Anything else is a
 * one-line error saying which.
 */
function explicitFiles(core: Core, options: ProgramOptions, open: (file: string) => ElfFile): {byModulePath: Map<string, string>; opened: Map<string, ElfFile>; flagFiles: {exe?: string; tcmalloc?: string}} {
  const explicit = new Map<string, string>()
  const opened = new Map<string, ElfFile>()
  const flagFiles: {exe?: string; tcmalloc?: string} = {}
  const search = {sysroot: options.sysroot, solibSearchPath: options.solibSearchPath}
  if (options.exe) {
    const file = open(resolveModuleName('--exe', options.exe, core.modules, search))
    const exe = mappedModule(core, '--exe', file, executableModule(core))
    explicit.set(exe.path, file.path)
    opened.set(file.path, file)
    flagFiles.exe = path.resolve(file.path)
  }
  if (options.tcmalloc) {
    const file = open(resolveModuleName('--tcmalloc', options.tcmalloc, core.modules, search))
    // A file the index was made with passed this check then.
    if (!file.checkedBefore && !file.definesSymbol('tc_malloc')) {
      throw new TomaError(`--tcmalloc ${file.path}: no TCMalloc in this file (it does not define tc_malloc)`)
    }
    const lib = mappedModule(core, '--tcmalloc', file, core.modules.find(m => /^libtcmalloc/.test(path.basename(m.path))))
    explicit.set(lib.path, file.path)
    opened.set(file.path, file)
    flagFiles.tcmalloc = path.resolve(file.path)
  }
  return {byModulePath: explicit, opened, flagFiles}
}

/**
 * The module of the core that `file` is: the one with its build-id; when the file or the module
 * in `role` has none to compare, the module named by the file's soname, else that role's module.
 */
function mappedModule(core: Core, flag: '--exe' | '--tcmalloc', file: ElfFile, role: Module | undefined): Module {
  const id = file.buildId?.toLowerCase()
  const byId = id ? core.modules.find(m => m.buildId?.toLowerCase() === id) : undefined
  if (byId) return byId
  const soname = file.soname
  const bySoname = soname ? core.modules.find(m => path.basename(m.path) === soname || path.basename(m.path).startsWith(soname + '.')) : undefined
  const candidate = bySoname ?? role
  if (candidate && (!id || !candidate.buildId)) return candidate
  if (candidate) {
    throw new TomaError(`${flag} ${file.path} is not mapped in the core: build-id ${file.buildId} of ${file.path} does not match ${candidate.buildId} in the core (${path.basename(candidate.path)}), nor any other module's`)
  }
  const none = flag === '--tcmalloc'
    ? 'the core maps no libtcmalloc; if tcmalloc is linked statically, give the executable with --exe'
    : 'no module of the core is the executable'
  throw new TomaError(`${flag} ${file.path} is not mapped in the core: no module has its build-id ${file.buildId ?? '(none)'} (${none})`)
}
