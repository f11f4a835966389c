import {cString} from './headers.js'

/**
 * Reads a .gnu_debuglink section: the separate debug file's name (NUL-terminated, padded to a
 * 4-byte boundary) followed by the CRC-32 of that file as u32. Null if malformed.
 */
export function parseDebugLink(data: Buffer): {file: string; crc: number} | null {
  const file = cString(data, 0)
  if (file === '') return null
  const crcAt = Math.ceil((file.length + 1) / 4) * 4
  if (crcAt + 4 > data.length) return null
  return {file, crc: data.readUInt32LE(crcAt)}
}
