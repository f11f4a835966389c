// Index size: what delta-encoded (zigzag varint) edge lists would save against the plain u32
// arrays the index keeps, and what they would cost to encode at analysis and decode at query
// time, measured on a real index (issue 33). Reads the index's arrays itself (any format version).
//   node dist/tools/bench/edge-encoding.js INDEX
import fs from 'node:fs'
import {performance} from 'node:perf_hooks'

const file = process.argv[2]
if (!file) {
  console.error('usage: node dist/tools/bench/edge-encoding.js INDEX')
  process.exit(2)
}
const fd = fs.openSync(file, 'r')
const pre = Buffer.alloc(24)
fs.readSync(fd, pre, 0, 24, 0)
const headerAt = pre.readUInt32LE(16) + pre.readUInt32LE(20) * 2 ** 32
const header = Buffer.alloc(pre.readUInt32LE(12))
fs.readSync(fd, header, 0, header.length, headerAt)
const arrays = (JSON.parse(header.toString('utf8')) as {arrays: Record<string, {type: string; offset: number; length: number}>}).arrays

function u32(name: string): Uint32Array {
  const e = arrays[name]
  if (!e || e.type !== 'u32') throw new Error(`${file}: no u32 array ${name}`)
  const out = new Uint32Array(e.length)
  const bytes = Buffer.from(out.buffer)
  for (let at = 0; at < bytes.length; at += 1 << 28) fs.readSync(fd, bytes, at, Math.min(1 << 28, bytes.length - at), 24 + e.offset + at)
  return out
}

/** Each list [start[i], start[i+1]) of `to` as zigzag varints of the difference from the previous target (the first from the source's own id). */
function encode(start: Uint32Array, to: Uint32Array): {bytes: Uint8Array; byteStart: Float64Array} {
  const out = new Uint8Array(to.length * 5)
  const byteStart = new Float64Array(start.length)
  let at = 0
  for (let i = 0; i + 1 < start.length; i++) {
    byteStart[i] = at
    let prev = i
    for (let e = start[i]!; e < start[i + 1]!; e++) {
      const d = to[e]! - prev
      prev = to[e]!
      let z = d >= 0 ? 2 * d : -2 * d - 1
      while (z >= 0x80) {
        out[at++] = (z % 0x80) + 0x80
        z = Math.floor(z / 0x80)
      }
      out[at++] = z
    }
  }
  byteStart[start.length - 1] = at
  return {bytes: out.subarray(0, at), byteStart}
}

function decodeAll(bytes: Uint8Array, byteStart: Float64Array, into: Uint32Array): void {
  let e = 0
  for (let i = 0; i + 1 < byteStart.length; i++) {
    let prev = i
    for (let at = byteStart[i]!, end = byteStart[i + 1]!; at < end; ) {
      let z = 0
      let scale = 1
      let b: number
      do {
        b = bytes[at++]!
        z += (b % 0x80) * scale
        scale *= 0x80
      } while (b >= 0x80)
      const d = z % 2 === 0 ? z / 2 : -(z + 1) / 2
      prev += d
      into[e++] = prev
    }
  }
}

const MiB = (n: number) => (n / 2 ** 20).toFixed(1)
for (const [startName, toName] of [['edge.outStart', 'edge.to'], ['edge.inStart', 'edge.inFrom']] as const) {
  const start = u32(startName)
  const to = u32(toName)
  let t = performance.now()
  const {bytes, byteStart} = encode(start, to)
  const encodeMs = performance.now() - t
  const back = new Uint32Array(to.length)
  t = performance.now()
  decodeAll(bytes, byteStart, back)
  const decodeMs = performance.now() - t
  if (!back.every((v, i) => v === to[i])) throw new Error(`${toName}: decoded lists differ`)
  // Writing the bytes saved: measured here, to a file in the index's folder, then removed.
  const scratch = `${file}.edge-encoding-${process.pid}`
  const plain = Buffer.from(to.buffer)
  t = performance.now()
  const out = fs.openSync(scratch, 'wx', 0o600)
  try {
    fs.writeSync(out, plain)
    fs.fsyncSync(out)
  } finally {
    fs.closeSync(out)
    fs.unlinkSync(scratch)
  }
  const writeMs = performance.now() - t
  // A query that reads one list needs the list's byte offset: 4 bytes an object while the encoded
  // bytes stay under 4 GiB (as the u32 starts now), 8 past that.
  const startBytes = bytes.length < 2 ** 32 ? 4 : 8
  const encodedTotal = bytes.length + startBytes * start.length
  const plainTotal = 4 * to.length + 4 * start.length
  console.log(
    `${toName}: ${to.length} edges; plain ${MiB(plainTotal)} MiB (targets and starts), delta varint ${MiB(encodedTotal)} MiB with ${startBytes}-byte starts ` +
      `(${(bytes.length / to.length).toFixed(2)} B an edge, ${((100 * encodedTotal) / plainTotal).toFixed(0)} %); ` +
      `encode ${encodeMs.toFixed(0)} ms, decode all ${decodeMs.toFixed(0)} ms; writing the plain targets with fsync ${writeMs.toFixed(0)} ms ` +
      `(${MiB(plain.length / (writeMs / 1000))} MiB/s)`,
  )
}
fs.closeSync(fd)
