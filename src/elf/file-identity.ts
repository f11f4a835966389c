import {statSync} from 'node:fs'

/** What tells one version of a file from another without reading it (as make and git do). */
export interface FileIdentity {
  size: number
  mtimeMs: number
  ino: number
}

/** A module file as an earlier reading found it: its identity then and its GNU build-id. */
export type KnownFile = FileIdentity & {buildId: string | null}

/** Known module files by path. */
export type KnownFiles = ReadonlyMap<string, KnownFile>

/** The identity of the file at `path` now, or null when it cannot be stat'ed. */
export function fileIdentity(path: string): FileIdentity | null {
  try {
    const st = statSync(path)
    return st.isFile() ? {size: st.size, mtimeMs: st.mtimeMs, ino: st.ino} : null
  } catch {
    return null
  }
}

/** Whether two identities are of the same version of a file. */
export function sameFile(a: FileIdentity | null, b: FileIdentity): boolean {
  return a !== null && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino
}
