import type {Recogniser} from './recogniser.js'
import {cpython} from './cpython/cpython.js'
import {luaRecogniser} from './lua/lua-recogniser.js'
import {dwarfRecogniser} from './dwarf/recogniser.js'
import {stdLayout} from './std-layout/recogniser.js'
import {pool} from './pool.js'
import {cString} from './c-string.js'

/**
 * The recognisers, in the order they run: most certain first, since a slot keeps the first name
 * it is given (the vtable tier has run before all of them, in the scan). Debug information comes
 * before the layouts so that a container's body gets its element type (`std::vector<app::Shape*>
 * body`); the layout tier then agrees with it (same kind) instead of naming it without.
 */
export const RECOGNISERS: readonly Recogniser[] = [
  cpython,
  luaRecogniser,
  dwarfRecogniser,
  stdLayout,
  pool,
  cString,
]
