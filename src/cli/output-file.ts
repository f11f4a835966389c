import fs from 'node:fs'
import path from 'node:path'
import type {Writable} from 'node:stream'
import {TomaError} from '../errors.js'
import type {Program} from '../program/program.js'
import {createTemporary, writeFailure, type TemporaryFile} from '../util/temporary-file.js'

/** What a command may replace at the path it writes to. */
export interface OutputRules {
  /** What the command writes, as the refusal names it ("toma index", "HTML report"). */
  kind: string
  /** Whether an existing file is of that kind (from its first bytes): such a file is replaced. */
  ownKind: (head: Buffer) => boolean
  /** The files the command reads: never written over, --force or not. */
  inputs: string[]
  /** --force: replace an existing file of another kind. */
  force: boolean
}

/**
 * Refuses, in one line, to write `output` where that would destroy something: one of the
 * command's inputs (the same file by inode, whatever the name: `--index core` would replace the
 * core), a folder, or an existing file of another kind than the command writes, unless --force.
 * Returns whether the output is a device or FIFO (`-o /dev/null`), written in place (never renamed
 * over: a temporary file beside /dev/null would replace the device).
 */
export function refuseOverwrite(output: string, rules: OutputRules): {special: boolean} {
  const target = fs.statSync(output, {throwIfNoEntry: false})
  if (!target) return {special: false}
  for (const input of rules.inputs) {
    const s = fs.statSync(input, {throwIfNoEntry: false})
    if (s && s.dev === target.dev && s.ino === target.ino) {
      throw new TomaError(`${output} is ${path.resolve(input) === path.resolve(output) ? 'one of this command\'s inputs' : `${input}, one of this command's inputs`}: refusing to write the ${rules.kind} over it`)
    }
  }
  if (target.isDirectory()) throw new TomaError(`${output} is a folder: give a file name for the ${rules.kind}`)
  if (!target.isFile()) return {special: true}
  if (!rules.force && !rules.ownKind(head(output))) {
    throw new TomaError(`${output} exists and is not a ${rules.kind}: refusing to replace it (give --force to replace it)`)
  }
  return {special: false}
}

function head(file: string): Buffer {
  const buf = Buffer.alloc(256)
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch {
    return Buffer.alloc(0)
  }
  try {
    return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0))
  } catch {
    return Buffer.alloc(0)
  } finally {
    fs.closeSync(fd)
  }
}

/** Every file a program was opened from: the core (and the compressed file it came from), module and debug files. */
export function programInputs(program: Program): string[] {
  const files = [program.core.path]
  if (program.compressed) files.push(program.compressed.path)
  for (const m of program.modules) {
    if (m.file) files.push(m.file.path)
    if (m.debug) files.push(m.debug.path)
  }
  for (const f of Object.values(program.flagFiles)) if (f) files.push(f)
  return files
}

/**
 * Where a command's output goes: standard output (no file, or `-`), or a file written through a
 * temporary one renamed into place when complete (temporary-file.ts), so a failure (a full disk,
 * Ctrl-C) leaves the old file or none, never a part. A device or FIFO is written in place.
 */
export class OutputFile {
  private constructor(
    /** As the user named it ('standard output' for stdout). */
    readonly name: string,
    readonly stream: Writable,
    private readonly temporary: TemporaryFile | null,
    private readonly owned: boolean,
  ) {}

  static open(output: string | undefined, rules: OutputRules): OutputFile {
    if (!output || output === '-') return new OutputFile('standard output', process.stdout, null, false)
    const {special} = refuseOverwrite(output, rules)
    try {
      if (special) return new OutputFile(output, fs.createWriteStream(output, {flags: 'w'}), null, true)
      const tmp = createTemporary(output, 0o666)
      return new OutputFile(output, fs.createWriteStream(tmp.path, {fd: tmp.fd, autoClose: false}), tmp, true)
    } catch (e) {
      throw writeFailure(output, e)
    }
  }

  /** Ends the output: the file is renamed into place once every byte is written. */
  async finish(): Promise<void> {
    try {
      if (this.owned) await new Promise<void>((resolve, reject) => this.stream.end((e?: Error | null) => (e ? reject(e) : resolve())))
      this.temporary?.commit()
    } catch (e) {
      this.abandon()
      throw writeFailure(this.name, e)
    }
  }

  /** Drops a file not finished (its temporary goes; the old file, if any, stays). */
  abandon(): void {
    if (this.owned) this.stream.destroy()
    this.temporary?.abandon()
  }
}

/** Writes a whole output (a report, a profile) as OutputFile does, to a file or standard output. */
export async function writeOutput(output: string | undefined, data: string | Uint8Array, rules: OutputRules): Promise<void> {
  const out = OutputFile.open(output, rules)
  try {
    if (!out.stream.write(data)) await new Promise<void>((resolve, reject) => {
      out.stream.once('drain', resolve)
      out.stream.once('error', reject)
    })
    await out.finish()
  } catch (e) {
    out.abandon()
    throw writeFailure(out.name, e)
  }
}
