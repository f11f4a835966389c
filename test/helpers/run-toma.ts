import {spawn} from 'node:child_process'
import {fileURLToPath} from 'node:url'

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

/**
 * Runs the built CLI (npm test compiles first) as a user would, without colour. Asynchronous, so
 * the test worker stays responsive while the child runs. `input`, when given, is piped to its stdin.
 */
export function runToma(args: string[], options: {cwd?: string; env?: Record<string, string>; input?: string} = {}): Promise<{status: number | null; stdout: string; stderr: string}> {
  return new Promise(resolve => {
    const child = spawn(process.execPath, [BIN, ...args], {cwd: options.cwd, env: {...process.env, NO_COLOR: '1', ...options.env}})
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', d => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', d => (stderr += d))
    if (options.input !== undefined) child.stdin.end(options.input)
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('close', status => {
      clearTimeout(timer)
      resolve({status, stdout, stderr})
    })
  })
}
