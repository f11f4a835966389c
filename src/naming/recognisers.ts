import type {Recogniser} from './recogniser.js'
import {dwarfRecogniser} from './dwarf/recogniser.js'

/**
 * The recognisers, in the order they run: most certain first, since a slot keeps the first name
 * it is given (the vtable tier has run before all of them, in the scan).
 */
export const RECOGNISERS: readonly Recogniser[] = [
  dwarfRecogniser,
]
