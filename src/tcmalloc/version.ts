import path from 'node:path'
import type {ElfFile} from '../elf/elf-file.js'
import {groupOfVersion} from './layout.js'
import {KNOWN_BUILDS} from './known-builds.js'
import {layoutData} from './layout-data.js'

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

/** What the core says about TCMalloc's release without its file: a known build-id, else the
 *  autotools file name (`.so.4.X.Y` of libtcmalloc{,_minimal}{,_debug}: one release each, 4.1.2 two). */
export interface CoreHint {
  versions: string[]
  /** Where the hint comes from, for the report. */
  how: string
}

const AUTOTOOLS_NAME = /^libtcmalloc(?:_minimal)?(?:_debug)?\.so\.(4\.\d+\.\d+)$/

/** The releases the core names for a module: by its build-id note, else by its file name in the NT_FILE list. */
export function versionsFromCore(modulePath: string, buildId: string | null): CoreHint | undefined {
  const known = buildId ? KNOWN_BUILDS[buildId.toLowerCase()] : undefined
  if (known) return {versions: [known.version], how: `build-id ${buildId} in the core (${known.what})`}
  const name = path.basename(modulePath.replace(/ \(deleted\)$/, ''))
  const m = AUTOTOOLS_NAME.exec(name)
  const versions = m ? layoutData.fileVersions[m[1]!] : undefined
  return versions?.length ? {versions, how: `file name ${name} in the core's list of mapped files`} : undefined
}
