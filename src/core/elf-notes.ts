/** One ELF note: owner name, type, descriptor bytes (a view into the buffer it was parsed from). */
export interface ElfNote {
  name: string
  type: number
  desc: Buffer
}

export const NT_GNU_BUILD_ID = 3

/**
 * Splits a note area (a PT_NOTE segment or SHT_NOTE section, in a core or in a module) into
 * notes. Each is namesz u32, descsz u32, type u32, then the name and the descriptor, each padded
 * to `align` (4 for classic notes, 8 for areas that say so, like .note.gnu.property). Stops at the
 * first entry that does not fit, telling `onOverrun` its offset when given.
 */
export function parseNotes(area: Buffer, align = 4, onOverrun?: (offset: number) => void): ElfNote[] {
  const a = align === 8 ? 8 : 4
  // Arithmetic, not `& ~(a - 1)`: a size near 2^32 from a hostile file must not turn negative.
  const pad = (n: number) => Math.ceil(n / a) * a
  const notes: ElfNote[] = []
  let at = 0
  while (at + 12 <= area.length) {
    const namesz = area.readUInt32LE(at)
    const descsz = area.readUInt32LE(at + 4)
    const type = area.readUInt32LE(at + 8)
    const nameAt = at + 12
    const descAt = nameAt + pad(namesz)
    if (descAt + descsz > area.length) {
      onOverrun?.(at)
      break
    }
    let nameEnd = nameAt + namesz
    if (namesz > 0 && area[nameEnd - 1] === 0) nameEnd--
    notes.push({name: area.toString('latin1', nameAt, nameEnd), type, desc: area.subarray(descAt, descAt + descsz)})
    at = descAt + pad(descsz)
  }
  return notes
}

/** Lowercase hex of the first NT_GNU_BUILD_ID note owned by "GNU", or null. */
export function buildIdFromNotes(notes: ElfNote[]): string | null {
  const note = notes.find(n => n.name === 'GNU' && n.type === NT_GNU_BUILD_ID && n.desc.length > 0)
  return note ? note.desc.toString('hex') : null
}
