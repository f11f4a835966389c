import fs from 'node:fs'
import {TomaError} from '../errors.js'

/**
 * Opens a file toma reads (a core, a module file, an index) for reading, refusing anything but a
 * regular file in one line. The open itself never blocks: a FIFO given as a core (or planted as a
 * module file in a sysroot) would otherwise hang the open until someone writes to it, so it is
 * opened with O_NONBLOCK (no effect on a regular file) and its kind checked on the descriptor.
 * Errors from the open are the caller's to word (they carry the errno code).
 */
export function openRegularFile(file: string): number {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  let stat: fs.Stats
  try {
    stat = fs.fstatSync(fd)
  } catch (e) {
    fs.closeSync(fd)
    throw e
  }
  if (!stat.isFile()) {
    fs.closeSync(fd)
    throw new TomaError(`${file}: not a regular file (${kindOf(stat)})`)
  }
  return fd
}

function kindOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a directory'
  if (stat.isFIFO()) return 'a FIFO'
  if (stat.isSocket()) return 'a socket'
  if (stat.isCharacterDevice()) return 'a character device'
  if (stat.isBlockDevice()) return 'a block device'
  return 'not a file'
}
