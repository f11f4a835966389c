import type {Writable} from 'node:stream'
import {writeFailure} from '../util/temporary-file.js'
import {terminalSafe} from '../util/printable.js'

/**
 * A buffered text sink for large outputs (exports of millions of objects): collects pieces into
 * ~1 MiB chunks and waits for the stream to drain, so memory stays flat whatever the graph's size.
 */
export class TextSink {
  private parts: string[] = []
  private size = 0
  private failed: Error | null = null

  /** `name`: the output as its failure names it (the file, or standard output); its owner ends the stream. */
  constructor(private readonly stream: Writable, private readonly name: string) {
    stream.on('error', e => (this.failed = e))
  }

  /**
   * Buffers text; returns a promise only when the buffer went out and the caller must wait. Text
   * for standard output passes the last guard of src/util/printable.ts (a JSON export holds DEL,
   * C1 and bidi controls from the core raw; its \u escapes keep the JSON valid and equal).
   */
  write(text: string): Promise<void> | undefined {
    this.parts.push(this.stream === process.stdout ? terminalSafe(text) : text)
    this.size += text.length
    return this.size >= 1 << 20 ? this.flush() : undefined
  }

  async flush(): Promise<void> {
    this.check()
    if (this.parts.length === 0) return
    const chunk = this.parts.join('')
    this.parts = []
    this.size = 0
    // A failed stream never drains: its error ends the wait instead.
    if (!this.stream.write(chunk)) {
      await new Promise<void>(resolve => {
        const done = () => {
          this.stream.off('drain', done)
          this.stream.off('error', done)
          resolve()
        }
        this.stream.on('drain', done)
        this.stream.on('error', done)
      })
    }
    this.check()
  }

  /** Writes out what is buffered (the owner of the stream ends it). */
  async close(): Promise<void> {
    await this.flush()
  }

  private check(): void {
    if (this.failed) throw writeFailure(this.name, this.failed)
  }
}
