/**
 * The layout of a toma index file (src/index/index-file.ts), for tests that damage one or compare
 * two byte by byte: a 24-byte preamble (magic, format version, header length, header offset as two
 * u32), the arrays from byte 24, the JSON header at the end.
 */
export const INDEX_DATA_START = 24

export function indexLayout(bytes: Buffer) {
  const headerLength = bytes.readUInt32LE(12)
  const headerAt = bytes.readUInt32LE(16) + bytes.readUInt32LE(20) * 2 ** 32
  const header = JSON.parse(bytes.toString('utf8', headerAt, headerAt + headerLength))
  return {header, headerAt, headerLength, data: bytes.subarray(INDEX_DATA_START, headerAt)}
}
