import type {Program} from '../../program/program.js'

/**
 * The interpreter's version from `Py_Version` (PY_VERSION_HEX, exported since 3.11; a const, so
 * read from the module's file when the core left its read-only pages out), or null before 3.11
 * or when unreadable.
 */
export function pythonVersion(program: Program): {major: number; minor: number; micro: number} | null {
  const s = program.symbolAddress('Py_Version')
  if (!s) return null
  const fromCore = program.core.memory.readU32(s.address)
  const fromFile = s.module.file?.readVirtual(s.symbol.value, 4)?.readUInt32LE(0)
  const hex = fromCore ?? fromFile
  if (hex === undefined) return null
  // PY_VERSION_HEX: major in the top byte, then minor, micro, release level and serial.
  return {major: Math.floor(hex / 2 ** 24) % 256, minor: Math.floor(hex / 2 ** 16) % 256, micro: Math.floor(hex / 2 ** 8) % 256}
}
