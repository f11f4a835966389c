import fs from 'node:fs'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {ZstdFrameWalk} from '../../src/input/zstd-frames.js'

// The walk of zstd's frame and block headers that tells a cut stream from a whole one beside
// Node's zstd decoder (src/input/zstd-frames.ts), on fixture v2.10-shared's core as the real zstd
// tool compressed it: one frame with its checksum (`zstd -lv`: 1 frame, Check XXH64), whole, as
// the decoders' tests show by decoding it to the dumped core byte for byte.
const ZST = fs.readFileSync(fileURLToPath(new URL('../../fixtures/compressed/v2.10-shared.core.zst', import.meta.url)))
const GZ = fs.readFileSync(fileURLToPath(new URL('../../fixtures/compressed/v2.10-shared.core.gz', import.meta.url)))

/** The walk's verdict on `bytes` passed in pieces of `piece` bytes: null when whole, else its message. */
function verdict(bytes: Uint8Array, piece = 1 << 20): string | null {
  const walk = new ZstdFrameWalk()
  try {
    for (let i = 0; i < bytes.length; i += piece) walk.push(bytes.subarray(i, i + piece))
    walk.end()
    return null
  } catch (e) {
    return (e as Error).message
  }
}

describe('zstd frame walk', () => {
  it('passes the whole stream, however it is cut into pieces', () => {
    for (const piece of [1 << 20, 65_536, 4097, 7, 1]) expect(verdict(ZST, piece), `pieces of ${piece}`).toBeNull()
  })

  it('refuses every cut: in the frame header, in a block, before and inside the checksum', () => {
    const cuts = [1, 4, 5, 6, 8, 12, 100, 65_536, ZST.length >> 1, ZST.length - 5, ZST.length - 4, ZST.length - 2, ZST.length - 1]
    for (const cut of cuts) expect(verdict(ZST.subarray(0, cut), 4097), `cut at ${cut}`).toMatch(/^zstd stream cut short: its \d+ bytes end inside a frame$/)
    expect(verdict(ZST.subarray(0, 0))).toBe('no zstd frame in 0 bytes')
  })

  it('take() stops where each frame ends, so that each frame has a decoder of its own', () => {
    const skippable = Buffer.alloc(8)
    skippable.writeUInt32LE(0x184d2a50, 0)
    const stream = Buffer.concat([ZST, skippable, ZST])
    const walk = new ZstdFrameWalk()
    const ends: number[] = []
    for (let at = 0; at < stream.length; ) {
      at += walk.take(stream.subarray(at, Math.min(stream.length, at + 4097)))
      if (walk.betweenFrames) ends.push(at)
    }
    expect(ends).toEqual([ZST.length, ZST.length + 8, 2 * ZST.length + 8])
    expect(() => walk.end()).not.toThrow()
  })

  it('passes frames one after another and skippable frames (RFC 8878 3.1), and refuses what is not zstd', () => {
    const skippable = Buffer.alloc(12)
    skippable.writeUInt32LE(0x184d2a5e, 0)
    skippable.writeUInt32LE(4, 4)
    expect(verdict(Buffer.concat([ZST, skippable, ZST]), 4097)).toBeNull()
    expect(verdict(Buffer.concat([ZST, skippable.subarray(0, 10)]), 4097)).toMatch(/cut short/)
    expect(verdict(Buffer.concat([ZST, GZ.subarray(0, 100)]))).toBe(`not a zstd frame at byte ${ZST.length} (magic 0x${GZ.readUInt32LE(0).toString(16)})`)
    expect(verdict(GZ)).toMatch(/^not a zstd frame at byte 0 /)
  })
})
