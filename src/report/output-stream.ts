import fs from 'node:fs'
import type {Writable} from 'node:stream'
import {TomaError} from '../errors.js'

/**
 * A buffered text sink for large outputs (exports of millions of objects): collects pieces into
 * ~1 MiB chunks and waits for the stream to drain, so memory stays flat whatever the graph's size.
 */
export class TextSink {
  private parts: string[] = []
  private size = 0
  private failed: Error | null = null

  private constructor(private readonly stream: Writable, private readonly ownsStream: boolean) {
    stream.on('error', e => (this.failed = e))
  }

  static open(file: string | undefined): TextSink {
    if (!file || file === '-') return new TextSink(process.stdout, false)
    try {
      return new TextSink(fs.createWriteStream(file), true)
    } catch (e) {
      throw new TomaError(`${file}: cannot write: ${(e as Error).message}`)
    }
  }

  /** Buffers text; returns a promise only when the buffer went out and the caller must wait. */
  write(text: string): Promise<void> | undefined {
    this.parts.push(text)
    this.size += text.length
    return this.size >= 1 << 20 ? this.flush() : undefined
  }

  async flush(): Promise<void> {
    if (this.failed) throw new TomaError(`cannot write output: ${this.failed.message}`)
    if (this.parts.length === 0) return
    const chunk = this.parts.join('')
    this.parts = []
    this.size = 0
    if (!this.stream.write(chunk)) await new Promise<void>(resolve => this.stream.once('drain', resolve))
  }

  async close(): Promise<void> {
    await this.flush()
    if (this.ownsStream) await new Promise<void>((resolve, reject) => this.stream.end((e?: Error | null) => (e ? reject(e) : resolve())))
    if (this.failed) throw new TomaError(`cannot write output: ${this.failed.message}`)
  }
}
