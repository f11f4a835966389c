// Types for elfy 1.0.0, which ships none: the parts of its Parser toma uses (src/core/core-header.ts,
// src/elf/headers.ts). A static import (not a runtime `require`) lets the fast-path bundle carry
// elfy inside it (tools/build/bundle-fast-path.ts), so a query does not start Node's CommonJS loader.
declare module 'elfy' {
  interface ElfyHeader {
    class: string
    endian: string
    type: string
    machine: string
    entry: number
    phoff: number
    shoff: number
    phentsize: number
    phnum: number
    shnum: number
    shstrndx: number
  }
  interface ElfyProgram { offset: number; vaddr: number; filesz: number; memsz: number; align: number }
  interface ElfySection { name: number; addr: number; off: number; size: number; link: number; info: number }
  class Parser {
    parseHeader(buf: Buffer): ElfyHeader
    parsePrograms(buf: Buffer, header: ElfyHeader): ElfyProgram[]
    parseSections(buf: Buffer, header: ElfyHeader): ElfySection[]
  }
  const elfy: {Parser: typeof Parser}
  export default elfy
}
