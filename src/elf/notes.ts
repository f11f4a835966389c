import {NT_GNU_BUILD_ID} from './constants.js'

export interface ElfNote { name: string; type: number; desc: Buffer }

/**
 * Splits a note area (a PT_NOTE segment or SHT_NOTE section) into notes. Each is namesz u32,
 * descsz u32, type u32, then the name and the descriptor, each padded to `align` (4 for classic
 * notes, 8 for areas whose segment/section says so, like .note.gnu.property). Stops quietly at
 * the first entry that does not fit.
 */
export function parseNotes(area: Buffer, align = 4): ElfNote[] {
  const a = align === 8 ? 8 : 4
  const pad = (n: number) => (n + a - 1) & ~(a - 1)
  const notes: ElfNote[] = []
  let at = 0
  while (at + 12 <= area.length) {
    const namesz = area.readUInt32LE(at), descsz = area.readUInt32LE(at + 4), type = area.readUInt32LE(at + 8)
    const nameAt = at + 12, descAt = nameAt + pad(namesz)
    if (descAt + descsz > area.length) break
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
