import type {Recogniser} from './recogniser.js'
import {cpython} from './cpython/cpython.js'
import {luaRecogniser} from './lua/lua-recogniser.js'
import {stdLayout} from './std-layout/recogniser.js'
import {pool} from './pool.js'
import {cString} from './c-string.js'

/**
 * The recognisers, in the order they run: most certain first, since a slot keeps the first name
 * it is given (the vtable tier has run before all of them, in the scan).
 */
export const RECOGNISERS: readonly Recogniser[] = [
  cpython,
  luaRecogniser,
  stdLayout,
  pool,
  cString,
]
