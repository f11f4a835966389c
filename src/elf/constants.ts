/** ELF constants toma needs (values from the System V gABI, the x86-64 psABI and AAELF64). */

export const ET_REL = 1
export const ET_EXEC = 2
export const ET_DYN = 3
export const ET_CORE = 4

export const PT_LOAD = 1
export const PT_DYNAMIC = 2
export const PT_INTERP = 3
export const PT_NOTE = 4
export const PT_PHDR = 6
export const PT_TLS = 7

export const PF_X = 1
export const PF_W = 2
export const PF_R = 4

export const SHT_NULL = 0
export const SHT_SYMTAB = 2
export const SHT_STRTAB = 3
export const SHT_RELA = 4
export const SHT_DYNAMIC = 6
export const SHT_NOTE = 7
export const SHT_NOBITS = 8
export const SHT_DYNSYM = 11
export const SHT_GNU_VERSYM = 0x6fffffff

export const SHF_WRITE = 0x1
export const SHF_ALLOC = 0x2
export const SHF_EXECINSTR = 0x4
export const SHF_TLS = 0x400

export const SHN_UNDEF = 0
export const SHN_ABS = 0xfff1

export const STT_NOTYPE = 0
export const STT_OBJECT = 1
export const STT_FUNC = 2
export const STT_SECTION = 3
export const STT_FILE = 4
export const STT_TLS = 6
export const STT_GNU_IFUNC = 10

export const STB_LOCAL = 0
export const STB_GLOBAL = 1
export const STB_WEAK = 2

export const DT_NULL = 0
export const DT_STRTAB = 5
export const DT_STRSZ = 10
export const DT_SONAME = 14

export const NT_GNU_BUILD_ID = 3

export const R_X86_64_TPOFF64 = 18
export const R_X86_64_GLOB_DAT = 6
export const R_X86_64_JUMP_SLOT = 7
export const R_X86_64_IRELATIVE = 37
/** From the aarch64 ELF ABI (AAELF64). */
export const R_AARCH64_JUMP_SLOT = 1026
export const R_AARCH64_IRELATIVE = 1032

export const ELF64_EHDR_SIZE = 64
export const ELF64_PHDR_SIZE = 56
export const ELF64_SHDR_SIZE = 64
export const ELF64_SYM_SIZE = 24
export const ELF64_RELA_SIZE = 24
export const ELF64_DYN_SIZE = 16
