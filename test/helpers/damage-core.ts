import type {Core} from '../../src/core/core.js'
import {writeWords} from './cut-segment.js'

/** Writes a 64-bit value into a copy of a core at a process address (core: the original, opened, for its segments). */
export function pokeU64(file: string, core: Core, address: number, value: number): void {
  writeWords(file, a => core.memory.segmentAt(a), [[address, value]])
}
