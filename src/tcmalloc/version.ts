import type {ElfFile} from '../elf/elf-file.js'
import {groupOfVersion} from './layout.js'

export interface VersionGuess {
  version: string | null
  group: string | null
  how: string
}

/** The "gperftools X.Y[.Z]" string TCMalloc carries in .rodata (TC_VERSION_STRING), from the file on disk. */
export function versionFromFile(file: ElfFile): VersionGuess | undefined {
  const needle = Buffer.from('gperftools 2.', 'latin1')
  for (const section of ['.rodata', undefined]) {
    for (const hit of file.findBytes(needle, section)) {
      const text = readString(file, hit)
      const m = /^gperftools (\d+\.\d+(?:\.\d+)?)/.exec(text ?? '')
      if (m) {
        const version = m[1]!
        const group = groupOfVersion(version) ?? null
        return {version, group, how: `"gperftools ${version}" string in ${file.path}`}
      }
    }
  }
  return undefined
}

function readString(file: ElfFile, vaddr: number): string | undefined {
  const bytes = file.readVirtual(vaddr, 32)
  if (!bytes) return undefined
  const nul = bytes.indexOf(0)
  return bytes.toString('latin1', 0, nul < 0 ? bytes.length : nul)
}
