import type {AddressSpace} from './address-space.js'
import type {Note} from './notes.js'
import {NT_FILE} from './notes.js'
import {PF_X} from './core-header.js'
import {buildIdFromNotes, parseNotes} from './elf-notes.js'
import {u64le} from '../util/u64le.js'

/** One file-backed mapping from NT_FILE. */
export interface MappedFile {
  start: number
  end: number
  /** Offset in the file, in bytes. */
  fileOffset: number
  path: string
}

/** A mapped ELF file (executable or shared library) and where it lies in the process. */
export interface Module {
  path: string
  /** Lowest mapped address of the file (where its ELF header is). */
  base: number
  /** Add to a link-time address of the file to get the process address (0 for a non-PIE executable). */
  loadBias: number
  mappings: MappedFile[]
  /** The GNU build-id read from the file's headers in the core, if that page was dumped. */
  buildId: string | null
}

const MAX_FILE_ENTRIES = 1 << 20

export function parseMappedFiles(notes: Note[]): MappedFile[] {
  const note = notes.find(n => n.type === NT_FILE && n.name === 'CORE')
  if (!note || note.desc.length < 16) return []
  const d = note.desc
  const count = u64le(d, 0)
  const pageSize = u64le(d, 8)
  if (count > MAX_FILE_ENTRIES || 16 + count * 24 > d.length) return []
  const files: MappedFile[] = []
  let names = 16 + count * 24
  for (let i = 0; i < count; i++) {
    const at = 16 + i * 24
    const nul = d.indexOf(0, names)
    const end = nul < 0 ? d.length : nul
    files.push({
      start: u64le(d, at),
      end: u64le(d, at + 8),
      fileOffset: u64le(d, at + 16) * pageSize,
      path: d.toString('utf8', names, end),
    })
    names = end + 1
  }
  return files
}

/** Groups file mappings into modules: every file whose offset-0 page is mapped and starts with an ELF header. */
export function findModules(files: MappedFile[], memory: AddressSpace): Module[] {
  const executable = (f: MappedFile) => ((memory.segmentAt(f.start)?.flags ?? 0) & PF_X) !== 0
  const byPath = new Map<string, MappedFile[]>()
  for (const f of files) {
    const list = byPath.get(f.path)
    if (list) list.push(f)
    else byPath.set(f.path, [f])
  }
  const modules: Module[] = []
  for (const [path, mappings] of byPath) {
    mappings.sort((a, b) => a.start - b.start)
    const head = mappings.find(m => m.fileOffset === 0)
    if (!head) continue
    const base = head.start
    // A mapped file that is not ELF (a locale archive, a font) is not a module. If the header page
    // was not dumped, a file with an executable mapping is still taken as one, without build-id.
    const magic = memory.readU32(base)
    if (magic === undefined ? !mappings.some(executable) : magic !== 0x464c457f) continue
    const {loadBias, buildId} = readElfIdentity(memory, base)
    modules.push({path, base, loadBias: loadBias ?? base, mappings, buildId})
  }
  return modules.sort((a, b) => a.base - b.base)
}

const PT_LOAD = 1
const PT_NOTE = 4

/** Reads load bias and GNU build-id from an ELF image's headers in memory (only what the core holds). */
function readElfIdentity(memory: AddressSpace, base: number): {loadBias: number | null; buildId: string | null} {
  const ehdr = memory.readBytes(base, 64)
  if (!ehdr || ehdr.readUInt32LE(0) !== 0x464c457f || ehdr[4] !== 2) return {loadBias: null, buildId: null}
  const phoff = u64le(ehdr, 32)
  const phnum = ehdr.readUInt16LE(56)
  if (ehdr.readUInt16LE(54) !== 56 || phnum === 0 || phnum > 256 || phoff > 65536) return {loadBias: null, buildId: null}
  const phdrs = memory.readBytes(base + phoff, phnum * 56)
  if (!phdrs) return {loadBias: null, buildId: null}
  let loadBias: number | null = null
  const notes: Array<{vaddr: number; size: number}> = []
  for (let i = 0; i < phnum; i++) {
    const at = i * 56
    const type = phdrs.readUInt32LE(at)
    const offset = u64le(phdrs, at + 8)
    const vaddr = u64le(phdrs, at + 16)
    const filesz = u64le(phdrs, at + 32)
    if (type === PT_LOAD && loadBias === null && offset === 0) loadBias = base - vaddr
    if (type === PT_NOTE) notes.push({vaddr, size: Math.min(filesz, 4096)})
  }
  if (loadBias === null) return {loadBias: null, buildId: null}
  for (const n of notes) {
    const buf = memory.readBytes(loadBias + n.vaddr, n.size)
    const buildId = buf ? buildIdFromNotes(parseNotes(buf)) : null
    if (buildId) return {loadBias, buildId}
  }
  return {loadBias, buildId: null}
}
