import path from 'node:path'
import {TomaError} from '../errors.js'
import type {Core} from '../core/core.js'
import type {Module} from '../core/modules.js'
import {ElfFile, type ElfSymbol} from '../elf/elf-file.js'
import {findModuleFile} from '../elf/find-module-file.js'

const AT_ENTRY = 9

export interface ProgramOptions {
  exe?: string
  tcmalloc?: string
  sysroot?: string
  solibSearchPath?: string[]
}

/** A module of the core together with its file on disk, when found. */
export interface LoadedModule {
  module: Module
  file: ElfFile | null
  /** How the file was found, or why not. */
  how: string
  /** The file's build-id was compared with the core's and matched. */
  verified: boolean
}

export interface SymbolicAddress {
  module: LoadedModule
  symbol: ElfSymbol | null
  /** Offset from the symbol, or from the module base when there is no symbol. */
  offset: number
}

/**
 * The process of a core together with its module files: where each module's file is, and
 * symbols both ways (name → process address, address → module + symbol + offset).
 */
export class Program {
  readonly modules: LoadedModule[]
  readonly executable: LoadedModule | undefined

  private constructor(readonly core: Core, modules: LoadedModule[]) {
    this.modules = modules
    const exe = executableModule(core)
    this.executable = modules.find(m => m.module === exe)
  }

  static load(core: Core, options: ProgramOptions = {}): Program {
    const explicit = explicitFiles(core, options)
    const modules: LoadedModule[] = core.modules.map(module => {
      const found = findModuleFile(
        {corePath: module.path, buildId: module.buildId},
        {sysroot: options.sysroot, solibSearchPath: options.solibSearchPath, explicit},
      )
      if (found.file) return {module, file: found.file, how: found.how, verified: found.verified}
      return {module, file: null, how: found.reason, verified: false}
    })
    return new Program(core, modules)
  }

  moduleAt(addr: number): LoadedModule | undefined {
    const m = this.core.moduleAt(addr)
    return m ? this.modules.find(l => l.module === m) : undefined
  }

  /** The nearest symbol at or below addr in the module that maps it. */
  symbolize(addr: number): SymbolicAddress | undefined {
    const loaded = this.moduleAt(addr)
    if (!loaded) return undefined
    const hit = loaded.file?.symbolAt(addr - loaded.module.loadBias)
    if (hit) return {module: loaded, symbol: hit.symbol, offset: hit.offset}
    return {module: loaded, symbol: null, offset: addr - loaded.module.base}
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

/** `symbol+0x10 (libfoo.so.1)` style text for an address. */
export function describeSymbolic(s: SymbolicAddress | undefined): string {
  if (!s) return '?'
  const mod = path.basename(s.module.module.path)
  if (!s.symbol) return `${mod}+0x${s.offset.toString(16)}`
  return `${s.symbol.name}${s.offset ? '+0x' + s.offset.toString(16) : ''} (${mod})`
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
 * Maps --exe and --tcmalloc to the core's module paths: first the module whose build-id is the
 * file's, else the module in that role (then the build-id check names the mismatch). A flag that
 * names a module the core does not have is an error, not a silent no-op.
 */
function explicitFiles(core: Core, options: ProgramOptions): Map<string, string> {
  const explicit = new Map<string, string>()
  const byBuildId = (file: string) => {
    const id = ElfFile.load(file).buildId
    return id ? core.modules.find(m => m.buildId === id) : undefined
  }
  if (options.exe) {
    const exe = byBuildId(options.exe) ?? executableModule(core)
    if (!exe) throw new TomaError(`--exe ${options.exe}: cannot tell which mapping of the core is the executable`)
    explicit.set(exe.path, options.exe)
  }
  if (options.tcmalloc) {
    const lib = byBuildId(options.tcmalloc) ?? core.modules.find(m => /libtcmalloc/.test(path.basename(m.path)))
    if (!lib) {
      throw new TomaError(
        `--tcmalloc ${options.tcmalloc}: the core maps no libtcmalloc shared library (if tcmalloc is linked statically, give the executable with --exe)`,
      )
    }
    explicit.set(lib.path, options.tcmalloc)
  }
  return explicit
}
