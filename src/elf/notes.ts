// The note format is the same in cores and module files; one parser serves both.
export {buildIdFromNotes, parseNotes, type ElfNote} from '../core/elf-notes.js'
