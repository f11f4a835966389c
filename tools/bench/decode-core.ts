// Decodes a compressed core through toma's own decoder (src/input/decompress.ts; run
// `npm run build` first), the output discarded, and prints its size and speed. For the zstd
// decoders' figures in README.md ("Compressed cores"):
//   TOMA_ZSTD_DECODER=zstd-tool node dist/tools/bench/decode-core.js core.zst
import fs from 'node:fs'
import {decompressFile} from '../../src/input/decompress.js'
import {fileCompression} from '../../src/input/compression-format.js'

const file = process.argv[2]
const format = file && fs.existsSync(file) ? fileCompression(file) : null
if (!format) {
  console.error('usage: node dist/tools/bench/decode-core.js COMPRESSED-CORE (zstd, xz, lz4 or gzip)')
  process.exit(2)
}
const start = process.hrtime.bigint()
let bytes = 0
await decompressFile(file, format, chunk => void (bytes += chunk.length))
const seconds = Number(process.hrtime.bigint() - start) / 1e9
console.log(`${format} (${process.env.TOMA_ZSTD_DECODER ?? 'default decoder'}): ${bytes} bytes in ${seconds.toFixed(2)} s, ${(bytes / 1e6 / seconds).toFixed(0)} MB/s`)
