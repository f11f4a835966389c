import fs from 'node:fs'
import {Readable, type Transform} from 'node:stream'
import zlib from 'node:zlib'
import type {CompressionFormat} from './compression-format.js'
import {decodeLz4Frames} from './lz4-frames.js'
import {ZstdFrameWalk} from './zstd-frames.js'
import {decodeWithZstdTool, zstdTool} from './zstd-tool.js'

/** Each piece of output, in order; called synchronously, so the piece may be reused after it returns. */
type Sink = (chunk: Uint8Array) => void

/**
 * Streams `input` through the decoder of its format into `sink`, reading 1 MiB at a time;
 * `read(bytes)` follows the compressed bytes consumed (for progress). Rejects on cut or damaged data.
 * The decoders were chosen by measured speed (README.md, "Compressed cores").
 */
export async function decompressFile(input: string, format: CompressionFormat, sink: Sink, read: (bytes: number) => void = () => {}): Promise<void> {
  const chunks = counted(fs.createReadStream(input, {highWaterMark: 1 << 20}), read)
  switch (format) {
    case 'gzip':
      return pump(Readable.from(chunks).pipe(zlib.createGunzip({chunkSize: 1 << 20})), sink)
    case 'zstd': {
      const decoder = zstdDecoder()
      if (decoder.kind === 'node-zlib') return nodeZstd(decoder.create, chunks, sink)
      if (decoder.kind === 'zstd-tool') return decodeWithZstdTool(decoder.path, chunks, sink)
      return fzstd(chunks, sink)
    }
    case 'xz': {
      const {XzReadableStream} = (await import('xz-decompress')).default as unknown as typeof import('xz-decompress')
      const out = new XzReadableStream(Readable.toWeb(Readable.from(chunks)) as ReadableStream<Uint8Array>)
      for await (const chunk of out as unknown as AsyncIterable<Uint8Array>) sink(chunk)
      return
    }
    case 'lz4':
      return decodeLz4Frames(chunks, sink)
  }
}

async function* counted(stream: fs.ReadStream, read: (bytes: number) => void): AsyncGenerator<Buffer> {
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    read(chunk.length)
    yield chunk
  }
}

async function pump(stream: NodeJS.ReadableStream | AsyncIterable<Buffer>, sink: Sink): Promise<void> {
  for await (const chunk of stream as AsyncIterable<Buffer>) sink(chunk)
}

type ZstdDecompressor = (options: zlib.ZlibOptions) => Transform

/** The zstd decoders, fastest first; `TOMA_ZSTD_DECODER` names one (for the tests, which run each). */
export const ZSTD_DECODERS = ['node-zlib', 'zstd-tool', 'fzstd'] as const
export type ZstdDecoderName = (typeof ZSTD_DECODERS)[number]

/**
 * The fastest zstd decoder at hand (README.md, "Compressed cores"): Node's own (libzstd, from Node
 * 22.15 and 23.8), else the system's `zstd` program, else fzstd (pure JS, always there).
 */
export function zstdDecoder(): {kind: 'node-zlib'; create: ZstdDecompressor} | {kind: 'zstd-tool'; path: string} | {kind: 'fzstd'} {
  const wanted = process.env.TOMA_ZSTD_DECODER
  if (wanted && !(ZSTD_DECODERS as readonly string[]).includes(wanted)) throw new Error(`TOMA_ZSTD_DECODER=${wanted}: not one of ${ZSTD_DECODERS.join(', ')}`)
  const create = (zlib as unknown as {createZstdDecompress?: ZstdDecompressor}).createZstdDecompress
  if (create && (!wanted || wanted === 'node-zlib')) return {kind: 'node-zlib', create}
  const tool = !wanted || wanted === 'zstd-tool' ? zstdTool() : null
  if (tool) return {kind: 'zstd-tool', path: tool}
  if (wanted && wanted !== 'fzstd') throw new Error(`TOMA_ZSTD_DECODER=${wanted}: not available here`)
  return {kind: 'fzstd'}
}

/**
 * Node's zstd decoder (libzstd). It ends quietly on input cut inside a frame, and drops what
 * follows a frame's end in the same write (Node 22.23.5: a file of two frames, written whole, came
 * out as its first), so the frames' headers are walked beside it (zstd-frames.ts): each frame gets
 * a decoder of its own, and a stream that stops inside a frame is an error.
 */
async function nodeZstd(create: ZstdDecompressor, chunks: AsyncIterable<Buffer>, sink: Sink): Promise<void> {
  const walk = new ZstdFrameWalk()
  const input = chunks[Symbol.asyncIterator]()
  /** Bytes read past the end of the frame being decoded. */
  let next: Buffer | undefined
  /** The bytes of one frame, the first of them in `next`. */
  async function* frame(): AsyncGenerator<Buffer> {
    while (next) {
      const chunk = next
      const used = walk.take(chunk)
      next = used < chunk.length ? chunk.subarray(used) : undefined
      yield chunk.subarray(0, used)
      if (walk.betweenFrames) return
      if (!next) next = await nextChunk()
    }
  }
  const nextChunk = async (): Promise<Buffer | undefined> => {
    const read = await input.next()
    return read.done ? undefined : read.value
  }
  try {
    next = await nextChunk()
    while (next) {
      await decodeFrame(create, frame(), sink)
      if (!next) next = await nextChunk()
    }
  } finally {
    await input.return?.()
  }
  walk.end()
}

/**
 * One frame through a decoder of Node's. Its output is read here rather than through a pipeline,
 * which reports the sink's own error (ExtentReached: the core ended; a consumer that stops) as an
 * abort.
 */
async function decodeFrame(create: ZstdDecompressor, bytes: AsyncIterable<Buffer>, sink: Sink): Promise<void> {
  const source = Readable.from(bytes)
  const decoder = create({chunkSize: 1 << 20})
  // pipe() does not pass the source's errors on (a read failing, a header that is not zstd's).
  source.on('error', e => decoder.destroy(e))
  try {
    await pump(source.pipe(decoder), sink)
  } finally {
    source.destroy()
  }
}

/** fzstd's streaming decoder (pure JS): it throws when the last push leaves a frame unfinished. */
async function fzstd(chunks: AsyncIterable<Buffer>, sink: Sink): Promise<void> {
  const {Decompress} = await import('fzstd')
  const decoder = new Decompress(chunk => sink(chunk))
  let any = false
  for await (const chunk of chunks) {
    decoder.push(chunk)
    any = true
  }
  if (!any) throw new Error('empty file')
  decoder.push(new Uint8Array(0), true)
}
