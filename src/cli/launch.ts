import fs from 'node:fs'
import os from 'node:os'

/**
 * What bin/run.js decides before it loads any command: the version line, and whether a bundle
 * of the command's fast path can run it. Kept apart from the fast path's own modules, which the
 * bundles hold copies of (tools/build/bundle-fast-path.ts): a process must load either those or the
 * bundle, never both.
 */

/** Where tools/build/bundle-fast-path.ts writes one bundle per command, relative to the package. */
export const FAST_BUNDLE_DIR = 'dist/fast'

/**
 * The bundle of command `id`'s fast path, or undefined when there is none or it is older than
 * the compiled command (a plain `tsc` since the last build): the compiled modules then run, as
 * they do without bundles. One stat each: tsc rewrites every command file whenever it builds.
 */
export function fastBundle(root: URL, id: string, commandPath: string): URL | undefined {
  const bundle = new URL(`${FAST_BUNDLE_DIR}/${id}.js`, root)
  const made = fs.statSync(bundle, {throwIfNoEntry: false})?.mtimeMs
  if (made === undefined) return undefined
  const compiled = fs.statSync(new URL(commandPath, root), {throwIfNoEntry: false})?.mtimeMs
  return compiled !== undefined && made >= compiled ? bundle : undefined
}

/**
 * The user agent oclif prints for --version, or null where oclif's platform detection is needed:
 * on what may be WSL (a Microsoft kernel, as is-wsl looks for it), which it names `wsl`.
 */
export function userAgent(pjson: {name: string; version: string}): string | null {
  if (process.platform === 'linux' && (os.release().toLowerCase().includes('microsoft') || procVersion().includes('microsoft'))) return null
  const arch = os.arch() === 'ia32' ? 'x86' : os.arch()
  return `${pjson.name}/${pjson.version} ${os.platform()}-${arch} node-${process.version}`
}

function procVersion(): string {
  try {
    return fs.readFileSync('/proc/version', 'utf8').toLowerCase()
  } catch {
    return ''
  }
}
