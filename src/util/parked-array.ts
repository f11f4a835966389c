import {readFileArray, type FileArray} from './file-array.js'
import {ScratchFile} from './scratch-file.js'

type Parkable = Uint8Array | Uint16Array | Uint32Array
type ParkableType<T extends Parkable> = new (buffer: ArrayBuffer, byteOffset: number, length: number) => T

/**
 * An array out of memory while phases that do not read it run (under a memory limit): its bytes
 * wait in a scratch file beside the index (scratch-file.ts), and `take` reads them back into
 * fresh memory. Writing and reading a few tens of MiB costs far less than the phases it spares
 * them.
 */
export class ParkedArray<T extends Parkable> {
  private readonly scratch: ScratchFile
  private readonly place: FileArray
  private readonly type: ParkableType<T>
  private readonly length: number

  /** `beside`: the file whose folder takes the scratch file (the index being written). */
  constructor(array: T, beside: string) {
    this.type = array.constructor as ParkableType<T>
    this.length = array.length
    this.scratch = new ScratchFile(beside)
    try {
      this.place = this.scratch.write(array)
    } catch (e) {
      this.scratch.remove()
      throw e
    }
  }

  /** The array, read back into memory of its own; the scratch file goes. */
  take(): T {
    try {
      const words = readFileArray(this.place, new Uint32Array(this.place.length))
      return new this.type(words.buffer as ArrayBuffer, 0, this.length)
    } finally {
      this.scratch.remove()
    }
  }

  /** Removes the scratch file without reading it (an analysis that failed; safe to call again). */
  remove(): void {
    this.scratch.remove()
  }
}
