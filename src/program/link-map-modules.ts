import path from 'node:path'
import type {Core} from '../core/core.js'
import {readLinkMap, type LinkMapEntry} from '../core/link-map.js'
import type {MappedFile, Module} from '../core/modules.js'
import {AT_BASE, AT_ENTRY, AT_EXECFN, AT_PAGESZ, AT_PHDR, AT_SYSINFO_EHDR} from '../core/process-info.js'
import {PT_DYNAMIC, PT_INTERP, PT_LOAD, PT_PHDR} from '../elf/constants.js'
import type {ElfFile} from '../elf/elf-file.js'
import {findModuleFile} from '../elf/find-module-file.js'


export interface LinkMapSearch {
  exe?: string
  tcmalloc?: string
  sysroot?: string
  solibSearchPath?: string[]
  open: (file: string) => ElfFile
}

/**
 * The modules of a core without NT_FILE (a QEMU-user core), found as a debugger finds them: the
 * executable's file (--exe, else the path the process was started by: AT_EXECFN, then
 * pr_psargs) gives its load bias, AT_PHDR − PT_PHDR, checked against AT_ENTRY − e_entry; its
 * dynamic section in the core leads through DT_DEBUG to the loader's link_map list (core/link-map.ts),
 * whose every object is then located like an NT_FILE path (--sysroot, --solib-search-path) and
 * mapped by its own PT_LOAD headers at its l_addr. The vDSO (AT_SYSINFO_EHDR) is no file; the
 * loader itself, when missing from the list, is at AT_BASE. Gives the core its modules and says how.
 */
export function useLinkMapModules(core: Core, search: LinkMapSearch): void {
  const found = linkMapModules(core, search)
  core.useLinkMapModules(found.modules, found.from)
}

function linkMapModules(core: Core, search: LinkMapSearch): {modules: Module[]; from: string} {
  const none = (why: string) => ({modules: [], from: `nowhere: the core has no NT_FILE note and ${why}`})
  const auxv = core.auxv
  const execPath = executablePath(core)
  const exePath = search.exe ?? execPath
  if (!exePath) return none('names no executable (no AT_EXECFN, no pr_psargs): give it with --exe')
  const exe = locate(exePath, search.exe !== undefined, search)
  if (!exe) return none(`its executable ${exePath} was not found: give it with --exe`)
  const phdr = auxv.get(AT_PHDR)
  const entry = auxv.get(AT_ENTRY)
  const phdrSegment = exe.segments.find(s => s.type === PT_PHDR)
  if (phdr === undefined || entry === undefined || !phdrSegment) return none('no AT_PHDR and AT_ENTRY (NT_AUXV) or no PT_PHDR in the executable: its load bias is unknown')
  const bias = Number(phdr) - phdrSegment.vaddr
  if (Number(entry) - exe.entry !== bias) {
    return none(`${exe.path} is not the core's executable: its entry point and program headers give load biases ${hex(Number(entry) - exe.entry)} and ${hex(bias)}`)
  }
  const pageSize = Number(auxv.get(AT_PAGESZ) ?? 4096n)
  // Where the list cannot be read, the executable is still known: its file at its load bias.
  const alone = (why: string) => ({modules: [moduleOf(execPath ?? exePath, bias, exe, pageSize)], from: `the executable alone (no NT_FILE, and ${why})`})
  const dynamic = exe.segments.find(s => s.type === PT_DYNAMIC)
  if (!dynamic) return alone(`${exe.path} has no dynamic section: a static executable`)
  const list = readLinkMap(core.memory, bias + dynamic.vaddr)
  if (list.entries.length === 0) return alone(list.problem ?? 'the link_map list is empty')
  if (list.entries[0]!.bias !== bias) return alone(`the link_map list's first object has l_addr ${hex(list.entries[0]!.bias)}, not the executable's load bias ${hex(bias)}`)
  const vdso = auxv.get(AT_SYSINFO_EHDR)
  // A name the core lacks is read from the executable's file where it points there (ld.so's l_name is PT_INTERP's string).
  const named = list.entries.map((e, i) => ({
    entry: e,
    name: i === 0 ? (execPath ?? exePath) : (e.name ?? (exe.readCString(e.nameAt - bias) || null)),
  }))
  const unnamed = named.filter(o => o.name === null)
  const objects = named.filter((o, i): o is {entry: LinkMapEntry; name: string} => i === 0 || (!!o.name && (vdso === undefined || o.entry.bias !== Number(vdso))))
  const loaderBase = Number(auxv.get(AT_BASE) ?? 0n)
  const interp = exe.segments.find(s => s.type === PT_INTERP)
  const interpName = interp ? exe.readCString(interp.vaddr) : undefined
  const loaderAdded = loaderBase !== 0 && interpName !== undefined && !objects.some(o => o.entry.bias === loaderBase)
  if (loaderAdded) objects.push({entry: {bias: loaderBase, name: interpName, nameAt: 0, dynamic: 0, at: 0}, name: interpName})
  const modules = objects.map(({entry: e, name}, i) => moduleOf(name, e.bias, i === 0 ? exe : locate(name, false, search), pageSize))
  const notes = [
    ...(unnamed.length ? [`${unnamed.length} object(s) of the list have no name in the core (l_addr ${unnamed.map(o => hex(o.entry.bias)).join(', ')})`] : []),
    ...(loaderAdded ? [`the dynamic loader ${interpName} is at AT_BASE ${hex(loaderBase)}`] : []),
    ...(list.problem ? [`the list ends early: ${list.problem}`] : []),
  ]
  return {modules, from: `link_map (no NT_FILE): r_debug through ${path.basename(exePath)}'s DT_DEBUG, load bias ${hex(bias)}${notes.map(n => `; ${n}`).join('')}`}
}

/** The path the process was started by: AT_EXECFN's string (on its stack), else the first word of pr_psargs. */
function executablePath(core: Core): string | undefined {
  const at = core.auxv.get(AT_EXECFN)
  const name = at === undefined ? undefined : core.memory.readCString(Number(at))
  return name || core.process.args?.split(' ')[0] || undefined
}

/** The file of a module, as an NT_FILE path is located (an explicit flag's file as given); undefined when not found. */
function locate(name: string, explicit: boolean, search: LinkMapSearch): ElfFile | undefined {
  const flagged = explicit ? name : search.tcmalloc && /^libtcmalloc/.test(path.basename(name)) ? search.tcmalloc : undefined
  if (flagged) return search.open(flagged)
  const found = findModuleFile({corePath: name, buildId: null}, {sysroot: search.sysroot, solibSearchPath: search.solibSearchPath, open: search.open})
  return found.file ?? undefined
}

/**
 * A module at load bias `bias`: its file-backed mappings are its PT_LOAD segments (page-aligned,
 * up to the end of their file bytes: the .bss past them is anonymous, as in NT_FILE). Without the
 * file, only its base is known (l_addr) and no address is taken for it.
 */
function moduleOf(name: string, bias: number, file: ElfFile | undefined, pageSize: number): Module {
  const down = (a: number) => Math.floor(a / pageSize) * pageSize
  const up = (a: number) => Math.ceil(a / pageSize) * pageSize
  const loads = file?.segments.filter(s => s.type === PT_LOAD && s.filesz > 0) ?? []
  const mappings: MappedFile[] = loads.map(s => ({
    start: down(bias + s.vaddr),
    end: up(bias + s.vaddr + s.filesz),
    fileOffset: down(s.offset),
    path: name,
  }))
  return {path: name, base: mappings.length ? mappings[0]!.start : bias, loadBias: bias, mappings, buildId: null}
}

const hex = (n: number) => `0x${n.toString(16)}`
