import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

/** Runs the built CLI (npm test compiles first) as a user would, without colour. */
export function runToma(args: string[], options: {cwd?: string; env?: Record<string, string>} = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: {...process.env, NO_COLOR: '1', ...options.env},
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 256 * 1024 * 1024,
  })
  return {status: r.status, stdout: r.stdout, stderr: r.stderr}
}
