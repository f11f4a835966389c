import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {describeAddress, placeLabel, type AddressPlace} from '../program/describe-address.js'
import type {Program} from '../program/program.js'
import {cString, stdStringOwner} from './strings.js'
import {RetentionIndex} from '../index/retention-index.js'
import {objectBrief} from './object-brief.js'

const PREVIEW = 64

/** Everything toma knows about the heap object holding an address (or where a non-heap address is). */
export function objectInfo(program: Program, index: HeapIndex, address: number, withStrings: boolean) {
  const obj = index.objectAt(address)
  if (!obj) {
    const place = describeAddress(program, address)
    return {address: hex(address), heap: false as const, place: placeOut(place), label: placeLabel(place)}
  }
  const memory = program.core.memory
  const state = index.state(obj.index)
  const owner = state === 'thread-cache' ? index.threadOf(obj.index) : undefined
  const bytes = memory.readBytes(obj.start, Math.min(PREVIEW, obj.size))
  const span = obj.span
  const retention = new RetentionIndex(index)
  const idom = state === 'live' ? retention.idom(obj.index) : null
  return {
    address: hex(address),
    heap: true as const,
    object: {
      id: obj.index,
      address: hex(obj.start),
      size: obj.size,
      offset: address - obj.start,
      state,
      thread: owner ? {tid: owner.tid, threadCache: hex(owner.cache)} : null,
      sizeClass: index.sizeClass(obj),
      type: state === 'live' ? index.type(obj.index) : null,
      // Why it is held (live objects): reachable from a root, what it retains, who dominates it.
      held:
        state === 'live'
          ? {
              reachable: retention.parent(obj.index) !== null,
              retained: retention.retained(obj.index),
              immediateDominator: typeof idom === 'number' ? objectBrief(index, idom) : null,
              onlyThread: typeof idom === 'object' && idom !== null ? idom.thread : null,
            }
          : null,
      span: {record: hex(index.spanRecord[span]!), start: hex(index.spanStart[span]!), pages: index.spanPages[span]!},
      bytes: bytes ? {hex: bytes.toString('hex'), ascii: bytes.toString('latin1').replace(/[^\x20-\x7e]/g, '.')} : null,
      strings: withStrings
        ? {
            cString: cString(memory, address),
            stdString: state === 'live' ? stdStringOwner(memory, index, obj.index, obj.start, obj.size) : null,
          }
        : undefined,
    },
  }
}

export type ObjectInfo = ReturnType<typeof objectInfo>

function placeOut(p: AddressPlace) {
  if (p.kind === 'stack' || p.kind === 'anonymous') return {...p, mapping: p.mapping.map(a => hex(a))}
  return p
}
