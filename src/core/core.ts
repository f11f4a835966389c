import fs from 'node:fs'
import {TomaError} from '../errors.js'
import {AddressSpace, loadSegments, overlappingSegments, type Segment} from './address-space.js'
import {PF_W, readCoreHeader} from './core-header.js'
import {FileReader, type FileOverlay} from './file-reader.js'
import {findModules, parseMappedFiles, type MappedFile, type Module} from './modules.js'
import {readNotes} from './notes.js'
import {parseAuxv, parseProcessInfo, parseSignalInfo, type ProcessInfo, type SignalInfo} from './process-info.js'
import {parseThreads, type Thread} from './thread-registers.js'
import type {Architecture} from './arch.js'
import {lastAtOrBelow} from '../util/search.js'
import type {MemorySource} from './memory-source.js'

/** What a mapping at an address is, for people: a module's segment, a thread's stack, or anonymous memory. */
export interface MappingInfo {
  segment: Segment
  file: MappedFile | null
  module: Module | null
  /** Threads whose stack pointer lies in this mapping. */
  stackOf: Thread[]
}

/**
 * The process image recorded in an ELF core: memory, threads, mapped files. It knows nothing of
 * allocators; everything above reads the process through it.
 */
export class Core {
  readonly memory: AddressSpace
  /** The processor the core is of: its registers' layout and names. */
  readonly arch: Architecture
  readonly threads: Thread[]
  files: MappedFile[]
  modules: Module[]
  /**
   * Where the modules were found: the kernel's NT_FILE note, or (a core without it, as QEMU-user
   * writes them) the dynamic loader's link_map list, read by the program layer (useLinkMapModules);
   * else why there are none.
   */
  modulesFrom: string
  private fileStarts: number[]
  readonly process: ProcessInfo
  readonly signal: SignalInfo | null
  readonly auxv: Map<number, bigint>
  readonly size: number
  readonly mtimeMs: number
  /** Set when the file ends before the bytes its segments claim (a cut or partial core). */
  readonly truncation: {segments: number; missingBytes: number; firstAddress: number} | null
  /** PT_LOAD headers that overlap another (a hostile or damaged core): cut where the next begins. */
  readonly overlapping: Array<[number, number]>
  /** Writable segments the core holds only the first p_filesz bytes of: the rest is absent, not scanned. */
  readonly partlyDumped: Segment[]

  private constructor(readonly path: string, private readonly file: FileReader) {
    const {arch, programs} = readCoreHeader(file, path)
    this.arch = arch
    const notes = readNotes(file, programs, path)
    this.memory = new AddressSpace(file, loadSegments(programs, file.size))
    this.overlapping = overlappingSegments(programs)
    this.partlyDumped = this.memory.segments.filter(s => s.flags & PF_W && s.fileSize > 0 && s.fileSize < s.end - s.start)
    this.threads = parseThreads(notes, arch)
    this.files = parseMappedFiles(notes).sort((a, b) => a.start - b.start)
    this.fileStarts = this.files.map(f => f.start)
    this.modules = findModules(this.files, this.memory)
    this.modulesFrom = this.files.length ? 'NT_FILE' : 'nowhere: the core has no NT_FILE note'
    this.process = parseProcessInfo(notes)
    this.signal = parseSignalInfo(notes)
    this.auxv = parseAuxv(notes)
    this.size = file.size
    this.mtimeMs = fs.statSync(path).mtimeMs
    const cut = this.memory.segments.filter(s => s.presentSize < s.fileSize)
    this.truncation = cut.length
      ? {
          segments: cut.length,
          missingBytes: cut.reduce((n, s) => n + s.fileSize - s.presentSize, 0),
          firstAddress: cut[0]!.start + cut[0]!.presentSize,
        }
      : null
    if (this.threads.length === 0) throw new TomaError(`${path}: damaged core: no thread (NT_PRSTATUS) notes`)
  }

  /**
   * Opens a core file; `overlay` reads it with some bytes replaced or cut short (damaged copies,
   * without copying); `readBlockBytes`: what each miss of the read cache reads (FileReader's
   * default, 64 KiB, unless given).
   */
  static open(path: string, overlay?: FileOverlay, readBlockBytes?: number): Core {
    let stat: fs.Stats
    try {
      stat = fs.statSync(path)
    } catch {
      throw new TomaError(`${path}: no such file`)
    }
    if (!stat.isFile()) throw new TomaError(`${path}: not a regular file`)
    let file: FileReader
    try {
      file = new FileReader(path, overlay, undefined, readBlockBytes)
    } catch (e) {
      throw new TomaError(`${path}: cannot open: ${(e as NodeJS.ErrnoException).code ?? String(e)}`)
    }
    try {
      return new Core(path, file)
    } catch (e) {
      file.close()
      throw e
    }
  }

  close(): void {
    this.file.close()
  }

  /**
   * Frees the cache of small reads (up to 64 MiB, filled by walks over scattered words such as
   * free lists), before phases that read in large pieces and need the memory for themselves;
   * `maxBytes`: what it may hold from now on.
   */
  dropReadCache(maxBytes?: number): void {
    this.file.dropCache(maxBytes)
  }

  /** What another thread needs to read this core's memory itself (plain data: no open file, no Program). */
  memorySource(): MemorySource {
    return {path: this.file.path, overlay: this.file.overlay, segments: this.memory.segments}
  }

  /**
   * The modules of a core without NT_FILE, as the dynamic loader's link_map list gives them
   * (program/link-map-modules.ts builds them with the module files at hand); `from` says how.
   */
  useLinkMapModules(modules: Module[], from: string): void {
    if (this.modulesFrom === 'NT_FILE') throw new Error('a core with NT_FILE keeps its own modules')
    this.modules = [...modules].sort((a, b) => a.base - b.base)
    this.files = modules.flatMap(m => m.mappings).sort((a, b) => a.start - b.start)
    this.fileStarts = this.files.map(f => f.start)
    this.modulesFrom = from
  }

  /** The module whose mappings contain addr (or whose anonymous .bss directly follows them). */
  moduleAt(addr: number): Module | undefined {
    for (const m of this.modules) {
      for (const f of m.mappings) if (addr >= f.start && addr < f.end) return m
    }
    return undefined
  }

  fileAt(addr: number): MappedFile | undefined {
    const f = this.files[lastAtOrBelow(this.fileStarts, addr)]
    return f && addr < f.end ? f : undefined
  }

  mappingAt(addr: number): MappingInfo | undefined {
    const segment = this.memory.segmentAt(addr)
    if (!segment) return undefined
    const file = this.fileAt(addr) ?? null
    return {
      segment,
      file,
      module: file ? (this.modules.find(m => m.path === file.path) ?? null) : null,
      stackOf: this.threads.filter(t => t.sp >= segment.start && t.sp < segment.end),
    }
  }

  /** The mapping holding a thread's stack (the PT_LOAD segment containing its stack pointer). */
  stackSegment(thread: Thread): Segment | undefined {
    return this.memory.segmentAt(thread.sp)
  }
}
