import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {describeAddress, placeLabel, type AddressPlace} from '../program/describe-address.js'
import type {Program} from '../program/program.js'
import {regionLabel, regionOf} from '../graph/root-regions.js'
import {cString, stdStringOwner} from './strings.js'

const PREVIEW = 64

/** Everything toma knows about the heap object holding an address (or where a non-heap address is). */
export function objectInfo(program: Program, index: HeapIndex, address: number, withStrings: boolean) {
  const obj = index.objectAt(address)
  if (!obj) {
    const place = describeAddress(program, address)
    // Inside a scanned root region (a pool in an anonymous mapping, a cached stack): say which, so
    // a pointer stored here is known to be a root.
    const region = regionOf(index.meta.rootRegions, address)
    return {address: hex(address), heap: false as const, place: placeOut(place), label: placeLabel(place), root: region ? {kind: region.kind, label: regionLabel(region, address)} : null}
  }
  const memory = program.core.memory
  const state = index.state(obj.index)
  const owner = state === 'thread-cache' ? index.threadOf(obj.index) : undefined
  const bytes = memory.readBytes(obj.start, Math.min(PREVIEW, obj.size))
  const span = obj.span
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
