import path from 'node:path'
import type {NamingContext, Recogniser} from '../recogniser.js'
import {VIA_LAYOUT} from '../via.js'
import {MAX_ELEMENTS, Probe} from './probe.js'
import {forEachOwnerWord} from './owner-words.js'
import {dequeAt} from './deque.js'
import {bucketsAt, singleBucketAt} from './unordered.js'
import {libcxxTreeAt, rbTreeAt} from './rb-tree.js'
import {libcxxDequeAt} from './libcxx-deque.js'
import {listAt} from './list.js'
import {functionTargetAt, Handlers} from './function.js'
import {libcxxStringAt, stringAt} from './string.js'
import {vectorAt} from './vector.js'
import {nameSharedPointees} from './shared-ptr.js'
import {OwnerWords} from './owner-word-list.js'
import {StackVectors} from './stack-vectors.js'
import {UnnamedStarts} from './unnamed-starts.js'
import type {SpanObjectArrays} from '../../heap/slot-table.js'

/** Words that may hold a string or a vector kept from the first read (24 bytes each, 24 MiB in all): past it, a second read. */
const CONTIGUOUS_KEPT = 1 << 20

/** Symbols any program built with libstdc++ statically and allocating with `new` has. */
const STATIC_LIBSTDCXX = ['_ZSt17__throw_bad_allocv', '_ZSt20__throw_length_errorPKc']

/**
 * Blocks of the standard library's containers (libstdc++'s C++11 ABI; libc++'s string, tree and
 * deque when libc++ is loaded, its vector, list and hash table sharing libstdc++'s proofs), named
 * from their owners: every live object and
 * root range is read word by word, and where a word starts a live unnamed block the layouts that
 * could hold such a pointer there are tested (one file each), the owner's layout lying wholly
 * inside the object or root range it was read from. Three passes, strongest proof first: the
 * containers whose proofs walk links (deque, unordered, map/set, list) and std::function; then
 * strings over the words left (a string's proof is one NUL and a size class); then vectors, the
 * weakest shape, over what is still unnamed. So a word that some list or tree node holds is never
 * taken for a string or a vector before the list or tree has been found. A vector read from a
 * stack is refused where a heap object points at its body (stack-vectors.ts: stale triples).
 */
export const stdLayout: Recogniser = stdLayoutKeeping(CONTIGUOUS_KEPT)

/** The tier, keeping at most `keptWords` owner words for its string and vector tests (a test reaches its second read with few). */
export function stdLayoutKeeping(keptWords: number): Recogniser {
  return {
    label: 'std-layout',
    via: VIA_LAYOUT,
    applies(ctx) {
      return libstdcxx(ctx) || libcxx(ctx)
    },
    run(ctx) {
      const p = new Probe(ctx)
      const handlers = new Handlers(ctx.program)
      const before = ctx.names.namedBy[VIA_LAYOUT]!
      const withLibcxx = libcxx(ctx)
      const count = (x: number | undefined) => x !== undefined && x >= 1 && x <= MAX_ELEMENTS
      // What every owner of each pass must have in its own words (each test checks it again, among
      // the rest): most words fail it without a lookup of the block they point at.
      const mayBeLinked = (a: number, w: number): boolean =>
        count(p.word(a + 8)) || // deque map size, bucket count
        count(p.word(a + 16)) || // list size
        (count(p.word(a + 24)) && p.u32(a - 8) === 0) || // tree node count, red header
        p.word(a - 16) === a + 32 || // single bucket
        handlers.inModule(p.word(a + 16)) || // std::function manager
        (withLibcxx && w <= p.word(a + 8)! && p.word(a + 8)! < p.word(a + 16)!) // libc++ deque map
      // A string's capacity + 1, a libc++ string's allocation and a vector's capacity end − begin are
      // each a request its block holds (the tests' `fits`), so none exceeds the largest block: a
      // pair of heap addresses (an array of pointers, a node's links) fails here, not after a lookup.
      const largest = largestBlock(ctx.objects.spans)
      const mayBeContiguous = (a: number, w: number): boolean => {
        if (withLibcxx) {
          const capacityWord = p.word(a - 16)
          if (capacityWord !== undefined && capacityWord % 2 === 1 && capacityWord - 1 <= largest) return true // libc++ long string's capacity word
        }
        const second = p.word(a + 8)
        const third = p.word(a + 16)
        if (second === undefined || third === undefined) return false
        return (second <= third && third > 15 && third < largest) || (w <= second && second <= third && third > w && third - w <= largest)
      }
      const linked = (a: number, w: number) => {
        if (!mayBeLinked(a, w)) return
        const b = p.block(w)
        if (!b) return
        void (dequeAt(p, a, b) || bucketsAt(p, a, b) || singleBucketAt(p, a, b) || rbTreeAt(p, a, b) || listAt(p, a, b) || functionTargetAt(p, a, b, handlers) ||
          (withLibcxx && (libcxxTreeAt(p, a, b) || libcxxDequeAt(p, a, b))))
      }
      const stackVectors = new StackVectors(ctx, p)
      const contiguous = (a: number, w: number) => {
        if (!mayBeContiguous(a, w)) return
        const b = p.block(w)
        if (b) void (stringAt(p, a, b) || (withLibcxx && libcxxStringAt(p, a, b)) || (!stackVectors.refuses(p.ownerStart, w) && vectorAt(p, a, b)))
      }
      // One read of every owner word: the linked containers are tested as each word comes, and the
      // words that may hold a string or a vector are kept, to be tested once every linked container
      // is named (their order, the strongest proof first). Past CONTIGUOUS_KEPT of them, a second
      // read tests the rest as the first did, in the same order.
      const kept = new OwnerWords(keptWords)
      // The words met, counted: where the list filled, the second read takes over at the next one.
      let met = 0
      let fullAt = Infinity
      const unnamed = new UnnamedStarts(ctx)
      forEachOwnerWord(ctx, p, (a, w, inObject) => {
        stackVectors.see(w, inObject)
        if (unnamed.may(w)) {
          linked(a, w)
          if (fullAt === Infinity && mayBeContiguous(a, w)) {
            kept.add(a, p.ownerStart, p.ownerEnd)
            if (kept.full) fullAt = met
          }
        }
        met++
      })
      kept.forEach((a, ownerStart, ownerEnd) => {
        p.ownerStart = ownerStart
        p.ownerEnd = ownerEnd
        const w = p.word(a)
        if (w !== undefined) contiguous(a, w)
      })
      if (fullAt < Infinity) {
        met = 0
        forEachOwnerWord(ctx, p, (a, w) => {
          if (met++ > fullAt && unnamed.may(w)) contiguous(a, w)
        })
      }
      const pointees = nameSharedPointees(ctx, p)
      if (pointees > 0) ctx.note(`${pointees} objects named by the shared_ptr control blocks that own them`)
      ctx.note(`${ctx.names.namedBy[VIA_LAYOUT]! - before} blocks named by the standard library's layouts`)
    },
  }
}

/** libstdc++ is loaded (Debian's libtcmalloc links it, so most TCMalloc programs have it) or linked in. */
function libstdcxx(ctx: NamingContext): boolean {
  if (ctx.program.modules.some(m => path.basename(m.module.path).startsWith('libstdc++.so'))) return true
  return STATIC_LIBSTDCXX.some(s => ctx.program.symbolAddress(s, ctx.program.executable ? [ctx.program.executable] : []) !== undefined)
}

/** libc++ is loaded: its layouts are tested too (a program of libc++ has libstdc++ through TCMalloc). */
function libcxx(ctx: NamingContext): boolean {
  return ctx.program.modules.some(m => path.basename(m.module.path).startsWith('libc++.so'))
}

/** The largest block a span holds. */
function largestBlock(spans: Pick<SpanObjectArrays, 'objectSize'>): number {
  let largest = 0
  for (let i = 0; i < spans.objectSize.length; i++) largest = Math.max(largest, spans.objectSize[i]!)
  return largest
}
