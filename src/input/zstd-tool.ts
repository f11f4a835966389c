import {spawn} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import {Readable} from 'node:stream'
import {pipeline} from 'node:stream/promises'

/** The system's `zstd` program: the first executable file named `zstd` in an absolute folder of PATH, or null. */
export function zstdTool(): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    // A relative entry ('', '.') would run whatever `zstd` the current folder holds.
    if (!path.isAbsolute(dir)) continue
    const file = path.join(dir, 'zstd')
    try {
      fs.accessSync(file, fs.constants.X_OK)
      if (fs.statSync(file).isFile()) return file
    } catch {
      // not there, or not runnable: the next folder
    }
  }
  return null
}

/** Bytes of the tool's stderr kept for the message: its complaint is one short line. */
const STDERR_KEPT = 4096

/**
 * Decodes zstd through the system's `zstd -d -c` (libzstd, several times fzstd's speed: README.md,
 * "Compressed cores"): no shell, the compressed bytes fed to its stdin, its stdout handed to `sink`
 * piece by piece, nothing on disk. libzstd's default limit (a 128 MiB window) bounds its memory; a
 * cut or damaged stream makes it exit non-zero, and its complaint is the error. When `sink` throws
 * (a size cap, a full disk) or the input cannot be read, the tool is killed and waited for before
 * the error is passed on, so no decoder outlives the call.
 */
export async function decodeWithZstdTool(tool: string, chunks: AsyncIterable<Buffer>, sink: (chunk: Uint8Array) => void): Promise<void> {
  // The environment is passed on (a zstd installed under its own prefix may need LD_LIBRARY_PATH);
  // zstd's own variables (ZSTD_CLEVEL, ZSTD_NBTHREADS) only set how it compresses.
  const child = spawn(tool, ['-d', '-c', '-q'], {stdio: ['pipe', 'pipe', 'pipe']})
  const exited = new Promise<{code: number | null; signal: NodeJS.Signals | null}>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code, signal) => resolve({code, signal}))
  })
  let complaint = ''
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    if (complaint.length < STDERR_KEPT) complaint += text
  })
  // A failure to read the input is told apart from the pipe breaking because the tool stopped.
  let readError: unknown
  let fedBytes = 0
  async function* input(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of chunks) {
        fedBytes += chunk.length
        yield chunk
      }
    } catch (e) {
      readError = e
      throw e
    }
  }
  const feeding = pipeline(Readable.from(input()), child.stdin)
  let failure: unknown
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) sink(chunk)
  } catch (e) {
    failure = e
  }
  if (failure !== undefined || readError !== undefined) child.kill('SIGKILL')
  const [fed, status] = await Promise.allSettled([feeding, exited])
  if (failure !== undefined) throw failure
  if (readError !== undefined) throw readError
  if (status.status === 'rejected') throw status.reason
  const {code, signal} = status.value
  if (code !== 0) throw new Error(toolComplaint(complaint) || `zstd ended with ${signal ?? `exit status ${code}`}`)
  if (fedBytes === 0) throw new Error('empty file')
  if (fed.status === 'rejected') throw new Error(`zstd stopped reading its input (${(fed.reason as Error).message})`)
}

/** The tool's complaint as one printable line: its lines joined, without the name it gives its input (`/*stdin*\`). */
function toolComplaint(stderr: string): string {
  return stderr
    .split('\n')
    .map(line => line.trim().replace(/^zstd: /, '').replace(/^\/\*stdin\*\\\s*:\s*/, ''))
    .filter(Boolean)
    .join('; ')
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 300)
}
