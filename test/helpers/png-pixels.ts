import zlib from 'node:zlib'

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** A PNG as a screenshot test reads it: its size, and its pixels (8-bit RGB or RGBA, not interlaced: what Chromium writes). */
export interface PngPixels {
  width: number
  height: number
  /** Distinct colours among the pixels of the given rows. */
  coloursInRows(rows: number[]): number
}

export function readPng(png: Buffer): PngPixels {
  if (!png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG')
  let width = 0
  let height = 0
  let channels = 0
  const data: Buffer[] = []
  for (let at = 8; at + 8 <= png.length; ) {
    const length = png.readUInt32BE(at)
    const type = png.toString('latin1', at + 4, at + 8)
    const body = png.subarray(at + 8, at + 8 + length)
    if (type === 'IHDR') {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      const [depth, colour, , , interlace] = body.subarray(8, 13)
      if (depth !== 8 || (colour !== 2 && colour !== 6) || interlace !== 0) throw new Error(`PNG of depth ${depth}, colour type ${colour}, interlace ${interlace}: not read here`)
      channels = colour === 6 ? 4 : 3
    } else if (type === 'IDAT') data.push(body)
    at += 12 + length
  }
  const raw = zlib.inflateSync(Buffer.concat(data))
  const stride = width * channels
  if (raw.length !== height * (stride + 1)) throw new Error(`PNG data of ${raw.length} bytes for ${width}×${height}`)
  const pixels = Buffer.alloc(height * stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    const out = pixels.subarray(y * stride, (y + 1) * stride)
    const up = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride)
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels]! : 0
      const b = up[i]!
      const c = i >= channels ? up[i - channels]! : 0
      const predictor = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter]
      if (predictor === undefined) throw new Error(`PNG row filter ${filter}`)
      out[i] = (line[i]! + predictor) & 0xff
    }
  }
  return {
    width,
    height,
    coloursInRows(rows) {
      const seen = new Set<number>()
      for (const y of rows) for (let x = 0; x < width; x++) seen.add(pixels.readUIntBE(y * stride + x * channels, 3))
      return seen.size
    },
  }
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}
