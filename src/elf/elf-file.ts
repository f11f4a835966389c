import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {openRegularFile} from '../util/regular-file.js'
import {resolve} from 'node:path'
import {TomaError} from '../errors.js'
import {
  DT_SONAME, DT_STRSZ, DT_STRTAB, ET_CORE, ET_DYN, ET_EXEC, ET_REL, PT_DYNAMIC, PT_LOAD, PT_NOTE,
  R_X86_64_TPOFF64, SHF_ALLOC, SHF_TLS, SHT_DYNAMIC, SHT_DYNSYM, SHT_GNU_VERSYM, SHT_NOBITS, SHT_NOTE, SHT_RELA,
  SHT_SYMTAB, STT_TLS,
} from './constants.js'
import {parseDebugLink} from './debuglink.js'
import {parseDynamic, type DynamicEntry} from './dynamic.js'
import {FileBytes} from './file-bytes.js'
import {fileIdentity, sameFile, type KnownFile, type KnownFiles} from './file-identity.js'
import {cString, parseHeaders, type ElfSection, type ElfSegment} from './headers.js'
import {buildIdFromNotes, parseNotes} from '../core/elf-notes.js'
import {pltStubAt, readPltStubs, type PltStub} from './plt-stubs.js'
import {parseRela} from './relocations.js'
import {readSymbolParts} from './symbol-parts.js'
import {readSymbolTable, SymbolIndex, type ElfSymbol} from './symbols.js'
import {u64le} from '../util/u64le.js'

export type {ElfSection, ElfSegment} from './headers.js'
export type {ElfSymbol} from './symbols.js'

/**
 * An executable or shared library on disk (never a core), read by range as its parts are used
 * (FileBytes: opening one reads its headers, notes and dynamic section). All addresses
 * are link-time virtual addresses (for a shared library, add the load bias to get the address in
 * the process). Lookups build their indexes on first use.
 */
export class ElfFile {
  /** The separate debug file whose .symtab names this file's addresses too (see useDebugFile). */
  private debugFile: ElfFile | null = null
  /** Finds it, once, when first needed (useDebugFileWhenNeeded). */
  private findDebugFile: (() => ElfFile | null) | null = null
  private symbolIndex?: SymbolIndex
  private pltStubs?: PltStub[]
  private fileBytes: FileBytes | null
  private parsed?: ParsedHeaders

  /**
   * @param known the identity and build-id of this very file as an index recorded them (see
   *   `known`): the file is then not read until something beyond its build-id is asked for.
   */
  private constructor(
    readonly path: string,
    bytes: FileBytes | null,
    private readonly known?: KnownFile,
  ) {
    this.fileBytes = bytes
    if (bytes) this.parsed = this.parse()
  }

  /**
   * Opens and parses a module file; every problem with the file is a one-line TomaError. The
   * first 64 bytes are checked before anything else is read, so a multi-gigabyte core given by
   * mistake is refused without reading it; the rest is read as it is used.
   */
  static load(path: string): ElfFile {
    return new ElfFile(path, openFileBytes(path))
  }

  /**
   * A module file an index was made with, when it is still the same file (path, size, mtime and
   * inode as `known` records them): its build-id is taken from the record, and the file is read
   * only when something else is asked of it. Every query checks the files its index was made
   * from, and most never need more than that (issue 13: start-up). Otherwise `load`.
   */
  static loadKnown(path: string, known: KnownFiles | undefined): ElfFile {
    const record = known?.get(resolve(path))
    if (record && sameFile(fileIdentity(path), record)) return new ElfFile(path, null, record)
    return ElfFile.load(path)
  }

  /** Whether this file is one an index was made with (loadKnown): what the analysis checked of it holds. */
  get checkedBefore(): boolean {
    return this.known !== undefined
  }

  get type(): number {
    return this.headers.type
  }

  get entry(): number {
    return this.headers.entry
  }

  /** e_machine (EM_X86_64, EM_AARCH64): a module file serves only a core of its own machine. */
  get machine(): number {
    return this.headers.machine
  }

  get segments(): ElfSegment[] {
    return this.headers.segments
  }

  get sections(): ElfSection[] {
    return this.headers.sections
  }

  get buildId(): string | null {
    return this.parsed || !this.known ? this.headers.buildId : this.known.buildId
  }

  get debugLink(): {file: string; crc: number} | null {
    return this.headers.debugLink
  }

  get soname(): string | null {
    return this.headers.soname
  }

  get dynamic(): DynamicEntry[] {
    return this.headers.dynamic
  }

  private get bytes(): FileBytes {
    return (this.fileBytes ??= openFileBytes(this.path))
  }

  private get headers(): ParsedHeaders {
    if (!this.parsed) {
      const parsed = this.parse()
      // A known file read later must still be the build the index recorded.
      if (this.known && parsed.buildId !== this.known.buildId) {
        throw new TomaError(`${this.path} changed while toma was using it (build-id ${parsed.buildId ?? 'none'}, was ${this.known.buildId ?? 'none'}); run the command again`)
      }
      this.parsed = parsed
    }
    return this.parsed
  }

  private parse(): ParsedHeaders {
    const bytes = this.bytes
    refuseCore(bytes.buf, this.path)
    readHeaderParts(bytes)
    const h = parseHeaders(bytes.buf, this.path)
    if (h.type === ET_REL) throw new TomaError(`${this.path} is a relocatable object (.o), not a linked module`)
    if (h.type !== ET_EXEC && h.type !== ET_DYN) throw new TomaError(`${this.path} has ELF type ${h.type}, not an executable or shared library`)
    const link = h.sections.find(s => s.name === '.gnu_debuglink')
    const dynamic = readDynamic(bytes, h.segments, h.sections)
    const partial = {...h, dynamic}
    return {
      ...partial,
      buildId: readBuildId(bytes, h.segments, h.sections),
      debugLink: link ? parseDebugLink(sectionBytes(bytes, link)) : null,
      soname: this.readSoname(partial),
    }
  }

  /**
   * Reads only the headers, symbol and string tables and notes of a file (readSymbolParts): for
   * separate debug files, whose DWARF bulk symbols do not need. Its sections hold no other bytes.
   */
  static loadSymbolParts(path: string): ElfFile {
    return ElfFile.fromBuffer(readSymbolParts(path), path)
  }

  /** Parses a whole module file already in memory; `path` is only used in messages. */
  static fromBuffer(buf: Buffer, path: string): ElfFile {
    return new ElfFile(path, FileBytes.of(buf, path))
  }

  /** True when there is no .symtab (only .dynsym, if that, is left). */
  get isStripped(): boolean {
    return !this.sections.some(s => s.type === SHT_SYMTAB)
  }

  /**
   * Takes the symbols of a separate debug file (`objcopy --only-keep-debug`, found by build-id or
   * .gnu_debuglink) in addition to this file's own: its .symtab ranks first. Bytes still come
   * from this file (a debug file has none for code and data).
   */
  useDebugFile(debug: ElfFile): void {
    this.useDebugFileWhenNeeded(() => debug)
  }

  /** useDebugFile with the file `find` gives (or none), found only when symbols or sections are first needed. */
  useDebugFileWhenNeeded(find: () => ElfFile | null): void {
    this.findDebugFile = find
    this.debugFile = null
    this.symbolIndex = undefined
  }

  /**
   * The separate debug file, looked for on first use: finding it (a look in each debug folder,
   * its headers read) is work most queries, which name no symbol, do not need.
   */
  private debug(): ElfFile | null {
    const find = this.findDebugFile
    if (find) {
      this.findDebugFile = null
      this.debugFile = find()
    }
    return this.debugFile
  }

  /** The first section with this name. */
  section(name: string): ElfSection | undefined {
    return this.sections.find(s => s.name === name)
  }

  /** A section's bytes in the file (empty for SHT_NOBITS). A view, not a copy: do not modify. */
  sectionData(section: ElfSection): Buffer {
    return sectionBytes(this.bytes, section)
  }

  /**
   * A defined symbol by exact (unversioned) name: .symtab before .dynsym, global before local,
   * default version before hidden ones. For an STT_TLS symbol, `value` is its offset in the
   * module's TLS block (PT_TLS), not an address.
   */
  symbolByName(name: string): ElfSymbol | undefined {
    return this.symbols().byName(name)
  }

  /**
   * Whether symbolByName finds a symbol of this name. An exported name is found in .dynsym alone,
   * without indexing the whole .symtab (--tcmalloc's check, made on every query).
   */
  definesSymbol(name: string): boolean {
    if (!this.symbolIndex && new SymbolIndex(this.symbolTables([SHT_DYNSYM])).byName(name)) return true
    return this.symbolByName(name) !== undefined
  }

  /** All defined symbols whose name starts with `prefix`, sorted by name. */
  symbolsByPrefix(prefix: string): ElfSymbol[] {
    return this.symbols().byPrefix(prefix)
  }

  /**
   * The function or object at a link-time address, with the offset into it: the innermost symbol
   * whose [value, value+size) holds it (or a size-0 one exactly at it); undefined outside every
   * symbol. When several symbols alias one address, the plainer name wins (malloc over __libc_malloc).
   */
  symbolAt(vaddr: number): {symbol: ElfSymbol; offset: number} | undefined {
    return this.symbols().at(vaddr)
  }

  /**
   * The PLT stub at a link-time address, as a symbol named `symbol@plt` (readPltStubs: the
   * relocation of the GOT slot its instructions jump through), with the offset into it; undefined
   * outside every stub this file's own sections prove. The stubs are read on first use.
   */
  pltStubAt(vaddr: number): {symbol: ElfSymbol; offset: number} | undefined {
    return pltStubAt(this.pltStubList(), vaddr)
  }

  /** Every PLT stub this file's own sections prove, in address order (readPltStubs), read once. */
  pltStubList(): readonly PltStub[] {
    return (this.pltStubs ??= readPltStubs({
      machine: this.machine,
      sections: this.sections,
      sectionData: s => this.sectionData(s),
      symbolTable: table => table.type !== SHT_DYNSYM && table.type !== SHT_SYMTAB ? []
        : readSymbolTable(this.tableBytes(table, this.sections[table.link]), table, this.sections[table.link]).map(e => e.sym),
    }))
  }

  /** The thread-local variable at `offset` of the module's TLS block (PT_TLS), with the offset into it. */
  tlsSymbolAt(offset: number): {symbol: ElfSymbol; offset: number} | undefined {
    return this.symbols().tlsAt(offset)
  }

  /**
   * The allocated, non-TLS section holding a link-time address, with the offset into it (from the
   * debug file's section headers when this file has none left, as after `sstrip`).
   */
  sectionAt(vaddr: number): {section: ElfSection; offset: number} | undefined {
    const debug = this.sections.length > 1 ? null : this.debug()
    const sections = debug ? debug.sections : this.sections
    for (let i = 1; i < sections.length; i++) {
      const s = sections[i]
      if (s.addr !== 0 && (s.flags & SHF_ALLOC) !== 0 && (s.flags & SHF_TLS) === 0 && vaddr >= s.addr && vaddr < s.addr + s.size) {
        return {section: s, offset: vaddr - s.addr}
      }
    }
    return undefined
  }

  /**
   * Bytes of the loaded image at a link-time address, as PT_LOAD segments lay them out (zeros in
   * the memsz part beyond filesz). Undefined unless the whole range lies in one segment. May be a
   * view into the file buffer: do not modify. A separate debug file (objcopy --only-keep-debug)
   * has filesz 0 for code and data, so it reads as zeros there: read bytes from the module itself.
   */
  readVirtual(vaddr: number, length: number): Buffer | undefined {
    for (const seg of this.segments) {
      if (seg.type !== PT_LOAD || vaddr < seg.vaddr || vaddr + length > seg.vaddr + seg.memsz) continue
      const rel = vaddr - seg.vaddr
      if (rel + length <= seg.filesz) return this.bytes.range(seg.offset + rel, length)
      const out = Buffer.alloc(length)
      if (rel < seg.filesz) this.bytes.range(seg.offset + rel, seg.filesz - rel).copy(out)
      return out
    }
    return undefined
  }

  /** A NUL-terminated string at a link-time address (at most `max` bytes), or undefined if unmapped. */
  readCString(vaddr: number, max = 4096): string | undefined {
    return this.cStringIn(this.segments, vaddr, max)
  }

  private cStringIn(segments: ElfSegment[], vaddr: number, max: number): string | undefined {
    for (const seg of segments) {
      if (seg.type !== PT_LOAD || vaddr < seg.vaddr || vaddr >= seg.vaddr + seg.filesz) continue
      const start = seg.offset + (vaddr - seg.vaddr)
      const end = Math.min(seg.offset + seg.filesz, start + max)
      return cString(this.bytes.ensure(start, end - start), start, end)
    }
    return undefined
  }

  /**
   * Every occurrence of `needle`, as link-time **virtual addresses** (not file offsets), in
   * ascending order. With `section`, only that section is searched (it must be allocated, i.e.
   * have an address, or this returns []); without, the file-backed part of every PT_LOAD.
   */
  findBytes(needle: Buffer, section?: string): number[] {
    const ranges: {offset: number; size: number; vaddr: number}[] = []
    if (section !== undefined) {
      const s = this.section(section)
      if (!s || s.type === SHT_NOBITS || (s.flags & SHF_ALLOC) === 0) return []
      ranges.push({offset: s.offset, size: s.size, vaddr: s.addr})
    } else {
      for (const seg of this.segments) {
        if (seg.type === PT_LOAD) ranges.push({offset: seg.offset, size: seg.filesz, vaddr: seg.vaddr})
      }
    }
    const hits: number[] = []
    if (needle.length === 0) return hits
    for (const r of ranges) {
      const area = this.bytes.range(r.offset, r.size)
      for (let at = area.indexOf(needle); at >= 0; at = area.indexOf(needle, at + 1)) hits.push(r.vaddr + at)
    }
    return hits.sort((a, b) => a - b)
  }

  /**
   * The link-time address of the GOT slot that the dynamic linker fills with the TP-relative
   * offset of a TLS variable (an R_X86_64_TPOFF64 relocation in .rela.dyn). Matches a relocation
   * against the named .dynsym symbol; for a TLS symbol that is local to the module (only in
   * .symtab), matches a symbol-less relocation whose addend is that symbol's offset.
   */
  tpoffGotSlot(symbolName: string): number | undefined {
    const dynsymIndex = this.sections.findIndex(s => s.type === SHT_DYNSYM)
    let symIndex = -1
    if (dynsymIndex >= 0) {
      const dynsym = this.sections[dynsymIndex]
      const list = readSymbolTable(this.tableBytes(dynsym, this.sections[dynsym.link]), dynsym, this.sections[dynsym.link])
      const i = list.findIndex(e => e.sym.name === symbolName)
      if (i >= 0) symIndex = i + 1 // readSymbolTable skips the null entry 0
    }
    const local = this.symbolByName(symbolName)
    const localOffset = local && local.type === STT_TLS ? local.value : undefined
    for (const sec of this.sections) {
      if (sec.type !== SHT_RELA || (sec.flags & SHF_ALLOC) === 0) continue
      for (const r of parseRela(this.sectionData(sec))) {
        if (r.type !== R_X86_64_TPOFF64) continue
        if (symIndex > 0 && r.sym === symIndex) return r.offset
        if (r.sym === 0 && localOffset !== undefined && r.addend === localOffset) return r.offset
      }
    }
    return undefined
  }

  private symbols(): SymbolIndex {
    if (!this.symbolIndex) {
      const own = this.symbolTables([SHT_SYMTAB, SHT_DYNSYM])
      this.symbolIndex = new SymbolIndex([...(this.debug()?.symbolTables([SHT_SYMTAB]) ?? []), ...own])
    }
    return this.symbolIndex
  }

  /** The raw entries of this file's symbol tables of the given types, in that order. */
  private symbolTables(types: number[]): {sym: ElfSymbol; hidden: boolean}[][] {
    const tables = []
    for (const type of types) {
      const table = this.sections.find(s => s.type === type)
      if (!table || table.type === SHT_NOBITS) continue
      const versym = type === SHT_DYNSYM ? this.sections.find(s => s.type === SHT_GNU_VERSYM) : undefined
      tables.push(readSymbolTable(this.tableBytes(table, this.sections[table.link], versym), table, this.sections[table.link], versym))
    }
    return tables
  }

  /** The file's buffer with these sections' bytes read (a symbol table, its strings, its versions). */
  private tableBytes(...sections: Array<ElfSection | undefined>): Buffer {
    for (const s of sections) if (s && s.type !== SHT_NOBITS) this.bytes.ensure(s.offset, s.size)
    return this.bytes.buf
  }

  private readSoname(h: {segments: ElfSegment[]; dynamic: DynamicEntry[]}): string | null {
    const soname = h.dynamic.find(d => d.tag === DT_SONAME)
    const strtab = h.dynamic.find(d => d.tag === DT_STRTAB)
    if (!soname || !strtab) return null
    const strsz = h.dynamic.find(d => d.tag === DT_STRSZ)?.value ?? 4096
    if (soname.value >= strsz) return null
    return this.cStringIn(h.segments, strtab.value + soname.value, strsz - soname.value) ?? null
  }
}

/** What the headers of a module file say, parsed once. */
interface ParsedHeaders {
  type: number
  machine: number
  entry: number
  segments: ElfSegment[]
  sections: ElfSection[]
  buildId: string | null
  debugLink: {file: string; crc: number} | null
  soname: string | null
  dynamic: DynamicEntry[]
}

/** A section's bytes in the file (empty for SHT_NOBITS). */
function sectionBytes(bytes: FileBytes, section: ElfSection): Buffer {
  if (section.type === SHT_NOBITS) return Buffer.alloc(0)
  return bytes.range(section.offset, section.size)
}

function readBuildId(bytes: FileBytes, segments: ElfSegment[], sections: ElfSection[]): string | null {
  for (const seg of segments) {
    if (seg.type !== PT_NOTE) continue
    const id = buildIdFromNotes(parseNotes(bytes.range(seg.offset, seg.filesz), seg.align))
    if (id) return id
  }
  for (const sec of sections) {
    if (sec.type !== SHT_NOTE) continue
    const id = buildIdFromNotes(parseNotes(sectionBytes(bytes, sec), sec.name === '.note.gnu.property' ? 8 : 4))
    if (id) return id
  }
  return null
}

function readDynamic(bytes: FileBytes, segments: ElfSegment[], sections: ElfSection[]): DynamicEntry[] {
  const seg = segments.find(s => s.type === PT_DYNAMIC)
  if (seg) return parseDynamic(bytes.range(seg.offset, seg.filesz))
  const sec = sections.find(s => s.type === SHT_DYNAMIC)
  return sec ? parseDynamic(sectionBytes(bytes, sec)) : []
}

/**
 * A module file's bytes, to be read as they are used; every problem opening it is a one-line
 * TomaError. A core given by mistake is refused from its first 64 bytes.
 */
function openFileBytes(path: string): FileBytes {
  try {
    const head = Buffer.alloc(64)
    const fd = openRegularFile(path)
    try {
      const got = head.subarray(0, readSync(fd, head, 0, 64, 0))
      refuseCore(got, path)
      return FileBytes.open(path, got, fstatSync(fd).size)
    } finally {
      closeSync(fd)
    }
  } catch (err) {
    if (err instanceof TomaError) throw err
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new TomaError(`cannot open ${path}: no such file`)
    if (code === 'EISDIR') throw new TomaError(`${path} is a directory, not an ELF file`)
    if (code === 'EACCES') throw new TomaError(`cannot read ${path}: permission denied`)
    throw new TomaError(`cannot read ${path}: ${(err as Error).message.split('\n')[0]}`)
  }
}

/**
 * Reads the parts parseHeaders reads: program and section headers and the section-name table,
 * at the places the ELF header says (clipped to the file: parseHeaders then says what is wrong).
 */
function readHeaderParts(bytes: FileBytes): void {
  const b = bytes.buf
  if (b.length < 64 || b.readUInt32BE(0) !== 0x7f454c46) return
  const phoff = u64le(b, 32), shoff = u64le(b, 40)
  const phentsize = b.readUInt16LE(54), phnum = b.readUInt16LE(56)
  const shentsize = b.readUInt16LE(58), shnum = b.readUInt16LE(60), shstrndx = b.readUInt16LE(62)
  bytes.ensure(phoff, phnum * phentsize)
  bytes.ensure(shoff, shnum * shentsize)
  const at = shoff + shstrndx * shentsize
  if (shstrndx < shnum && shentsize >= 64 && at + 64 <= b.length) bytes.ensure(u64le(b, at + 24), u64le(b, at + 32))
}

/** A core is refused as soon as its e_type is visible, before any other complaint about it. */
function refuseCore(head: Buffer, path: string): void {
  if (head.length >= 18 && head.readUInt32BE(0) === 0x7f454c46 && head[5] === 1 && head.readUInt16LE(16) === ET_CORE) {
    throw new TomaError(`${path} is a core file, not a module`)
  }
}
