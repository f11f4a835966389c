import {execFileSync} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {ElfFile} from '../../src/elf/elf-file.js'
import {parseRela} from '../../src/elf/relocations.js'
import {testTemp} from './test-temp.js'

const SHT_SYMTAB = 2
const SHT_RELA = 4
const ET_EXEC = 2
const R_X86_64_64 = 1
const R_X86_64_32 = 10
const ELF64_SYM_SIZE = 24

/**
 * Object files (.o, compiled with -g) combined by `ld -r` and given as one ElfFile whose DWARF
 * reads as a linked module's: an object's .debug_info names its strings and other units through
 * relocations (RELA: the bytes in place are 0), which are applied here (symbol value + addend, the
 * two kinds DWARF uses on x86-64), and the file is marked ET_EXEC so that ElfFile opens it. For
 * tests of DWARF readers on builds whose executable is not linked: addresses are not meaningful.
 */
export function relocatedDebugObject(objects: string[]): ElfFile {
  const dir = testTemp('dwarf-object-')
  try {
    const combined = path.join(dir, 'combined.o')
    execFileSync('ld', ['-r', ...objects, '-o', combined])
    const buf = fs.readFileSync(combined)
    buf.writeUInt16LE(ET_EXEC, 16)
    const elf = ElfFile.fromBuffer(buf, combined)
    const symtab = elf.sections.find(s => s.type === SHT_SYMTAB)!
    for (const rela of elf.sections) {
      const target = elf.sections[rela.info]
      if (rela.type !== SHT_RELA || !target?.name.startsWith('.debug_')) continue
      for (const r of parseRela(buf.subarray(rela.offset, rela.offset + rela.size))) {
        const value = buf.readBigUInt64LE(symtab.offset + r.sym * ELF64_SYM_SIZE + 8) + BigInt(r.addend)
        if (r.type === R_X86_64_32) buf.writeUInt32LE(Number(BigInt.asUintN(32, value)), target.offset + r.offset)
        else if (r.type === R_X86_64_64) buf.writeBigUInt64LE(BigInt.asUintN(64, value), target.offset + r.offset)
      }
    }
    return ElfFile.fromBuffer(buf, combined)
  } finally {
    fs.rmSync(dir, {recursive: true, force: true})
  }
}
