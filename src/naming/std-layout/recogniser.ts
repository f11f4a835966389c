import path from 'node:path'
import type {Recogniser} from '../recogniser.js'
import {VIA_LAYOUT} from '../via.js'
import {Probe} from './probe.js'
import {forEachOwnerWord} from './owner-words.js'
import {dequeAt} from './deque.js'
import {bucketsAt, singleBucketAt} from './unordered.js'
import {rbTreeAt} from './rb-tree.js'
import {listAt} from './list.js'
import {functionTargetAt} from './function.js'
import {stringAt} from './string.js'
import {vectorAt} from './vector.js'

/** Symbols any program built with libstdc++ statically and allocating with `new` has. */
const STATIC_LIBSTDCXX = ['_ZSt17__throw_bad_allocv', '_ZSt20__throw_length_errorPKc']

/**
 * Blocks of libstdc++'s containers (C++11 ABI), named from their owners: every live object and
 * root range is read word by word, and where a word starts a live unnamed block the layouts that
 * could hold such a pointer there are tested (one file each), the owner's layout lying wholly
 * inside the object or root range it was read from. Three passes, strongest proof first: the
 * containers whose proofs walk links (deque, unordered, map/set, list) and std::function; then
 * strings over the words left (a string's proof is one NUL and a size class); then vectors, the
 * weakest shape, over what is still unnamed. So a word that some list or tree node holds is never
 * taken for a string or a vector before the list or tree has been found.
 */
export const stdLayout: Recogniser = {
  label: 'std-layout',
  via: VIA_LAYOUT,
  applies(ctx) {
    if (ctx.program.modules.some(m => path.basename(m.module.path).startsWith('libstdc++.so'))) return true
    return STATIC_LIBSTDCXX.some(s => ctx.program.symbolAddress(s, ctx.program.executable ? [ctx.program.executable] : []) !== undefined)
  },
  run(ctx) {
    const p = new Probe(ctx)
    const before = ctx.names.namedBy[VIA_LAYOUT]!
    // The words no linked container took, with their owners' bounds, for the two later passes.
    const left: number[] = []
    forEachOwnerWord(ctx, (a, w, start, end) => {
      const b = p.block(w)
      if (!b) return
      p.ownerStart = start
      p.ownerEnd = end
      if (dequeAt(p, a, b) || bucketsAt(p, a, b) || singleBucketAt(p, a, b) || rbTreeAt(p, a, b) || listAt(p, a, b) || functionTargetAt(p, a, b)) return
      left.push(a, w, start, end)
    })
    for (const test of [stringAt, vectorAt]) {
      for (let i = 0; i < left.length; i += 4) {
        const b = p.block(left[i + 1]!)
        if (!b) continue
        p.ownerStart = left[i + 2]!
        p.ownerEnd = left[i + 3]!
        test(p, left[i]!, b)
      }
    }
    ctx.note(`${ctx.names.namedBy[VIA_LAYOUT]! - before} blocks named by libstdc++'s layouts`)
  },
}
