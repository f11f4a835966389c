import path from 'node:path'
import type {LoadedModule, Program} from '../program/program.js'
import type {AllocatorModule} from '../heap/heap-model.js'
import {describeAllocatorModule as describe} from '../heap/allocator-module.js'

const THREAD_HEAPS = '_ZN8tcmalloc11ThreadCache13thread_heaps_E'

/**
 * The module holding TCMalloc: a libtcmalloc* library by name, else the module exporting its
 * symbols, else (a stripped static link) the executable, marked as a guess for the caller to
 * confirm by finding the allocator's structures in it.
 */
export function findAllocatorModule(program: Program): (AllocatorModule & {guessed: boolean}) | undefined {
  const byName = program.modules.find(m => /^libtcmalloc/.test(path.basename(m.module.path)))
  const bySymbol = program.modules.find(m => m.file?.symbolByName(THREAD_HEAPS) !== undefined)
  const loaded = byName ?? bySymbol
  if (loaded) return {...describe(program, loaded), guessed: false}
  return program.executable ? {...describe(program, program.executable), guessed: true} : undefined
}
