import lz4 from 'lz4js'
import {ByteReader} from './byte-reader.js'

const FRAME_MAGIC = 0x184d2204
const LEGACY_MAGIC = 0x184c2102
/** Skippable frames have magics 0x184D2A50..0x184D2A5F. */
const isSkippable = (magic: number) => (magic & 0xfffffff0) === 0x184d2a50
const BLOCK_MAX = [0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20]
/** Linked blocks may copy from the 64 KiB of output before them. */
const WINDOW = 64 << 10

/**
 * Decodes LZ4 frames (the `lz4` tool's format, one or more frames in a row) from a stream, block by
 * block: lz4js decodes each block, this reads the frame layout around it, so memory stays at one
 * block plus the 64 KiB window linked blocks refer back into.
 */
export async function decodeLz4Frames(source: AsyncIterable<Buffer>, write: (chunk: Uint8Array) => void): Promise<void> {
  const input = new ByteReader(source)
  let frames = 0
  while (frames === 0 || !(await input.atEnd())) {
    const magic = (await input.read(4)).readUInt32LE(0)
    if (isSkippable(magic)) {
      await input.read((await input.read(4)).readUInt32LE(0))
      continue
    }
    if (magic === LEGACY_MAGIC) throw new Error('legacy LZ4 format (lz4 -l) is not supported; recompress without -l')
    if (magic !== FRAME_MAGIC) throw new Error(`not an LZ4 frame (magic 0x${magic.toString(16)})`)
    await decodeFrame(input, write)
    frames++
  }
}

async function decodeFrame(input: ByteReader, write: (chunk: Uint8Array) => void): Promise<void> {
  const [flg, bd] = await input.read(2)
  if (flg! >> 6 !== 1) throw new Error(`LZ4 frame version ${flg! >> 6} is not 1`)
  const blockChecksum = (flg! & 0x10) !== 0
  const contentSize = (flg! & 0x08) !== 0
  const contentChecksum = (flg! & 0x04) !== 0
  const dictionary = (flg! & 0x01) !== 0
  if (dictionary) throw new Error('LZ4 frame needs a dictionary')
  const blockMax = BLOCK_MAX[(bd! >> 4) & 7]!
  if (!blockMax) throw new Error('LZ4 frame has an invalid block size')
  await input.read((contentSize ? 8 : 0) + 1) // content size (unused: the stream's end says it), header checksum
  // Output buffer: the window of what came before, then room for one block.
  const out = new Uint8Array(WINDOW + blockMax)
  let kept = 0
  for (;;) {
    const word = (await input.read(4)).readUInt32LE(0)
    if (word === 0) break
    const size = word & 0x7fffffff
    if (size > blockMax) throw new Error(`LZ4 block of ${size} bytes exceeds the frame's ${blockMax}`)
    const data = await input.read(size)
    if (blockChecksum) await input.read(4)
    let end: number
    if (word & 0x80000000) {
      out.set(data, kept)
      end = kept + size
    } else {
      end = lz4.decompressBlock(data, out, 0, size, kept)
      if (!(end > kept && end <= kept + blockMax)) throw new Error('damaged LZ4 block')
    }
    write(out.subarray(kept, end)) // written before the buffer is reused
    // Keep the last 64 KiB of output at the buffer's start for the next block's back references.
    const from = Math.max(0, end - WINDOW)
    out.copyWithin(0, from, end)
    kept = end - from
  }
  if (contentChecksum) await input.read(4)
}
