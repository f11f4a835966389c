import fs from 'node:fs'
import {readElements, readFileArray, type FileArray} from './file-array.js'
import {ScratchFile} from './scratch-file.js'
import {Blocks} from './block-cache.js'

type Parkable = Uint8Array | Uint16Array | Uint32Array
type ParkableType<T extends Parkable> = {new (buffer: ArrayBuffer, byteOffset: number, length: number): T; BYTES_PER_ELEMENT: number}

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

  /**
   * The array read where it waits, through a cache of blocks of `cacheBytes` (block-cache.ts), for
   * a walk that reads it at random but mostly near where it read last: the caller closes it before
   * `take` or `remove`.
   */
  blocks(cacheBytes: number): Blocks<T> {
    const {type, place} = this
    const size = type.BYTES_PER_ELEMENT
    let fd: number | null = null
    return new Blocks<T>(
      {
        length: this.length,
        make: count => new type(new ArrayBuffer(count * size), 0, count),
        read(first, into) {
          fd ??= fs.openSync(place.path, 'r')
          readElements(fd, place, first, into)
        },
        close() {
          if (fd !== null) fs.closeSync(fd)
          fd = null
        },
      },
      cacheBytes,
    )
  }

  /** Removes the scratch file without reading it (an analysis that failed; safe to call again). */
  remove(): void {
    this.scratch.remove()
  }
}
