import fs from 'node:fs'
import {openRegularFile} from '../util/regular-file.js'

/** The compressed formats a core may come in (systemd-coredump writes zstd by default). */
export type CompressionFormat = 'zstd' | 'xz' | 'lz4' | 'gzip'

/** Each format's magic bytes at the start of the file: the name may say nothing (core.1234.zst renamed, or no suffix). */
const MAGICS: Array<[CompressionFormat, number[]]> = [
  ['zstd', [0x28, 0xb5, 0x2f, 0xfd]],
  ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ['lz4', [0x04, 0x22, 0x4d, 0x18]],
  ['gzip', [0x1f, 0x8b]],
]

/** The compression of a file's first bytes, or null (an ELF core, or anything else). */
export function compressionOf(head: Uint8Array): CompressionFormat | null {
  for (const [format, magic] of MAGICS) if (magic.every((b, i) => head[i] === b)) return format
  return null
}

/** The compression of a file by its magic, or null when it is not one (or cannot be read: the caller's open says why). */
export function fileCompression(file: string): CompressionFormat | null {
  let fd: number
  try {
    fd = openRegularFile(file)
  } catch {
    return null
  }
  try {
    const head = Buffer.alloc(8)
    const n = fs.readSync(fd, head, 0, head.length, 0)
    return compressionOf(head.subarray(0, n))
  } catch {
    return null
  } finally {
    fs.closeSync(fd)
  }
}
