import fs from 'node:fs'

/**
 * Free space left on a disk toma writes a big file to: others need it more than a copy of a core.
 * TOMA_FREE_SPACE_RESERVE (bytes) sets another (the tests use a small disk of their own).
 */
export function freeSpaceReserve(env = process.env): number {
  const given = Number(env.TOMA_FREE_SPACE_RESERVE)
  return env.TOMA_FREE_SPACE_RESERVE && Number.isSafeInteger(given) && given >= 0 ? given : 256 * 2 ** 20
}
/** Data written between two looks at the free space (statfs is cheap, but not per chunk). */
const CHECK_EVERY = 64 * 2 ** 20

/** A write that would leave too little free space: the user's to act on (`io`: not the data's fault). */
export class DiskNearlyFull extends Error {
  readonly io = true
}

/**
 * Stops a big write (a decompressed core) before it fills the disk: checked before the first
 * byte and every 64 MiB written, it throws once the disk holding `dir` has less than the reserve
 * left, so a compression bomb or a core too big for the disk ends with one line, not a full disk.
 */
export class FreeSpaceWatch {
  private next = 0

  constructor(private readonly dir: string, private readonly reserve = freeSpaceReserve()) {
    this.check(0)
  }

  /** `written`: bytes that went to the disk so far. */
  check(written: number): void {
    if (written < this.next) return
    this.next = written + CHECK_EVERY
    const free = freeBytes(this.dir)
    if (free !== null && free < this.reserve) {
      throw new DiskNearlyFull(`the disk holding ${this.dir} has ${Math.floor(free / 2 ** 20)} MiB free, under toma's reserve of ${Math.floor(this.reserve / 2 ** 20)} MiB: stopped after writing ${Math.floor(written / 2 ** 20)} MiB; free some space or decompress the core on another disk`)
    }
  }
}

/** Bytes an unprivileged user may still write on the disk holding `dir`, or null when unknown. */
export function freeBytes(dir: string): number | null {
  try {
    const s = fs.statfsSync(dir)
    return s.bavail * s.bsize
  } catch {
    return null
  }
}
