import fs from 'node:fs'
import {createTemporary, writeFailure, type TemporaryFile} from './temporary-file.js'
import type {FileArray} from './file-array.js'

/**
 * Arrays a step keeps out of memory for a while (the dominator pass under a memory limit), in a
 * temporary file of its own beside the index: created as the index's temporary is (O_EXCL,
 * O_NOFOLLOW, a name no one can predict, removed if the process dies), and removed once the step
 * is done. Each array is laid out after the last; the step reads them back as FileArrays
 * (file-array.ts).
 */
export class ScratchFile {
  private readonly file: TemporaryFile
  /** What a failure to write names (the index's path, .scratch). */
  private readonly name: string
  private bytes = 0

  /** `beside`: a file whose folder takes the scratch file (the index being written). */
  constructor(beside: string) {
    this.name = `${beside}.scratch`
    this.file = createTemporary(this.name)
  }

  /** Room for `length` elements after the others: where they lie (written in pieces by writeAt). */
  reserve(length: number): FileArray {
    const array = {path: this.file.path, byteOffset: this.bytes, length, written: Int32Array.of(1)}
    this.bytes += 4 * length
    return array
  }

  /** `words` as elements [at, at + words.length) of `array`. */
  writeAt(array: FileArray, at: number, words: Uint32Array): void {
    if (at < 0 || at + words.length > array.length) throw new RangeError(`elements ${at} to ${at + words.length} of an array of ${array.length}`)
    this.writeBytes(new Uint8Array(words.buffer, words.byteOffset, words.byteLength), array.byteOffset + 4 * at)
  }

  private writeBytes(bytes: Uint8Array, at: number): void {
    try {
      for (let done = 0; done < bytes.length; ) done += fs.writeSync(this.file.fd, bytes, done, bytes.length - done, at + done)
    } catch (e) {
      // A full disk is the user's to act on: one line, as the index's own writes say it.
      throw writeFailure(this.name, e)
    }
  }

  /**
   * An array written whole, as words (an array of bytes or halfwords with its last word padded
   * with zeros): where it lies. Read back into a Uint32Array, its buffer holds the array's bytes.
   */
  write(view: Uint8Array | Uint16Array | Uint32Array): FileArray {
    const array = this.reserve(Math.ceil(view.byteLength / 4))
    this.writeBytes(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), array.byteOffset)
    const pad = 4 * array.length - view.byteLength
    if (pad > 0) this.writeBytes(new Uint8Array(pad), array.byteOffset + view.byteLength)
    return array
  }

  /** Closes and removes the file (safe to call again). */
  remove(): void {
    this.file.abandon()
  }
}
