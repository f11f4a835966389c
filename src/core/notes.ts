import {TomaError} from '../errors.js'
import type {FileReader} from './file-reader.js'
import {parseNotes, type ElfNote} from './elf-notes.js'
import {PT_NOTE, type ProgramHeader} from './core-header.js'

export const NT_PRSTATUS = 1
export const NT_PRPSINFO = 3
export const NT_AUXV = 6
export const NT_FILE = 0x46494c45
export const NT_SIGINFO = 0x53494749

export type Note = ElfNote

/** Note segments are small (kilobytes per thread); anything beyond this is a damaged header. */
const MAX_NOTE_SEGMENT = 256 * 1024 * 1024

/** Reads every note of every PT_NOTE segment, in file order. A cut or malformed note segment is an error. */
export function readNotes(file: FileReader, programs: ProgramHeader[], name: string): Note[] {
  const notes: Note[] = []
  for (const p of programs) {
    if (p.type !== PT_NOTE) continue
    if (p.filesz > MAX_NOTE_SEGMENT) throw new TomaError(`${name}: damaged core: a note segment claims ${p.filesz} bytes`)
    if (p.offset + p.filesz > file.size) {
      throw new TomaError(`${name}: truncated core: the notes end at byte ${p.offset + p.filesz} but the file has ${file.size} bytes`)
    }
    const seg = file.read(p.offset, p.filesz)
    notes.push(
      ...parseNotes(seg, 4, at => {
        throw new TomaError(`${name}: damaged core: note at file offset ${p.offset + at} runs past its segment`)
      }),
    )
  }
  return notes
}
