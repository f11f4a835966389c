import fs from 'node:fs'
import {Readable} from 'node:stream'
import zlib from 'node:zlib'
import type {CompressionFormat} from './compression-format.js'
import {decodeLz4Frames} from './lz4-frames.js'

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
    case 'zstd':
      return zstd(chunks, sink)
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

async function pump(stream: NodeJS.ReadableStream, sink: Sink): Promise<void> {
  for await (const chunk of stream as AsyncIterable<Buffer>) sink(chunk)
}

/** fzstd's streaming decoder (pure JS): it throws when the last push leaves a frame unfinished. */
async function zstd(chunks: AsyncIterable<Buffer>, sink: Sink): Promise<void> {
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
