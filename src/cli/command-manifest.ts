import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {writeFileSafely} from '../util/temporary-file.js'

/**
 * oclif.manifest.json lists every command with its flags and arguments, so that a call of toma
 * loads only the command it runs (without it oclif imports every command, and all they import,
 * to learn their flags). `npm run build` writes it; this module keeps it from going stale when
 * the commands were compiled by a plain `tsc` since: a command added, removed or rebuilt.
 */
export const MANIFEST = 'oclif.manifest.json'

/** Writes the manifest of the package at `root` (atomically: concurrent calls may race). */
export async function writeManifest(root: string): Promise<string> {
  const {Plugin} = await import('@oclif/core/config')
  const plugin = new Plugin({root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true})
  await plugin.load()
  const file = path.join(root, MANIFEST)
  writeFileSafely(file, JSON.stringify(plugin.manifest), 0o644)
  return file
}

/**
 * Rewrites the manifest when a compiled command is newer than it (or it is missing). A few stat
 * calls on every start; a package folder that cannot be written is left as it is (oclif then
 * finds the commands the slow way, correctly).
 */
export async function refreshStaleManifest(rootUrl: URL): Promise<void> {
  const root = fileURLToPath(rootUrl)
  const commands = path.join(root, 'dist', 'commands')
  try {
    const made = fs.statSync(path.join(root, MANIFEST), {throwIfNoEntry: false})?.mtimeMs ?? -1
    let newest = fs.statSync(commands).mtimeMs
    for (const f of fs.readdirSync(commands)) newest = Math.max(newest, fs.statSync(path.join(commands, f)).mtimeMs)
    if (newest > made) await writeManifest(root)
  } catch {
    // No dist/commands (nothing to list) or a read-only install: oclif does without.
  }
}
