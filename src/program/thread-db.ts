import path from 'node:path'
import type {LoadedModule, Program} from './program.js'

/**
 * The field descriptors glibc carries for libthread_db (`_thread_db_<struct>_<field>`, GLIBC_PRIVATE,
 * in libc.so.6's dynamic symbols since 2.34): each `{size in bits, element count, byte offset}` as
 * three little-endian uint32; a `_thread_db_sizeof_<struct>` is one uint32. One reader for every
 * use (struct pthread's fields, the stack cache in ld.so's `_rtld_global`).
 */
export interface ThreadDb {
  libc: LoadedModule
  /** A field's {bits, count, offset}, or null when libc has no such descriptor. */
  field(name: string): [number, number, number] | null
  /** A `sizeof_` descriptor, or null. */
  sizeOf(name: string): number | null
}

/** The descriptors of the core's libc, or null when its file is not at hand. */
export function threadDb(program: Program): ThreadDb | null {
  const libc = program.modules.find(l => l.file && (/^libc[.-]/.test(path.basename(l.module.path)) || l.file.soname === 'libc.so.6'))
  const file = libc?.file
  if (!libc || !file) return null
  const read = (name: string, bytes: number) => {
    const s = file.symbolByName(`_thread_db_${name}`)
    return s ? file.readVirtual(s.value, bytes) : undefined
  }
  return {
    libc,
    field: name => {
      const b = read(name, 12)
      return b ? [b.readUInt32LE(0), b.readUInt32LE(4), b.readUInt32LE(8)] : null
    },
    sizeOf: name => read(`sizeof_${name}`, 4)?.readUInt32LE(0) ?? null,
  }
}
