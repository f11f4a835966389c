import type {NamingContext, Recogniser} from '../recogniser.js'
import {VIA_RUNTIME} from '../via.js'
import {hex} from '../../errors.js'
import {imageCString} from '../../program/image-reads.js'
import {objectInBlock, type BlockObject} from './object-in-block.js'
import {ownedBlocks, type StorageTypes} from './owned-blocks.js'
import {arenas} from './arena.js'
import {PyTypes} from './type-objects.js'
import {pythonVersion} from './version.js'
import {GC_HEAD_BYTES, layoutFor, type CpythonLayout} from './layout.js'
import {GrowableF64, GrowableU32} from '../../util/growable.js'

export const PYTHON_OBJECT = 'python object'
export const PYTHON_STORAGE = 'python storage'

/**
 * CPython's objects by their own headers (tier 3 of issue 30): each live block holding a PyObject
 * (at its start, or after the GC header and managed-dict words its type's flags call for) whose
 * ob_type is a proven type object is `python:<tp_name>`; then the blocks those objects own by
 * layout (list items, dict keys and values, set tables, …) are `python:<what>` of kind
 * 'python storage'. Layouts are 3.11's to 3.13's (layout.ts): other versions are said and left
 * unnamed.
 */
export const cpython: Recogniser = {
  label: 'cpython',
  via: VIA_RUNTIME,
  applies: ctx => ctx.program.symbolAddress('PyType_Type') !== undefined,
  run(ctx) {
    const typeType = ctx.program.symbolAddress('PyType_Type')!.address
    const v = pythonVersion(ctx.program)
    const layout = v ? layoutFor(v.major, v.minor) : undefined
    if (!v || !layout) {
      ctx.note(`CPython ${v ? `${v.major}.${v.minor}.${v.micro}` : 'before 3.11 (no Py_Version)'}: object layouts are known for 3.11 to 3.13 only; no object named`)
      return
    }
    nameCpythonObjects(ctx, layout, typeType, `${v.major}.${v.minor}.${v.micro}`)
  },
}

function nameCpythonObjects(ctx: NamingContext, layout: CpythonLayout, typeType: number, version: string): void {
  const {program, objects, live, names} = ctx
  const memory = program.core.memory
  const state = objects.state
  const blockSize = (address: number): number | null => {
    const o = objects.findObject(address)
    return o && o.start === address && state[o.index] === live ? o.size : null
  }
  const types = new PyTypes(memory, (a, max) => imageCString(program, a, max), typeType, a => blockSize(a - GC_HEAD_BYTES) !== null, a => program.symbolize(a) !== undefined)
  const storageTypes: StorageTypes = {
    set: program.symbolAddress('PySet_Type')?.address,
    frozenset: program.symbolAddress('PyFrozenSet_Type')?.address,
    bytearray: program.symbolAddress('PyByteArray_Type')?.address,
  }

  if (!types.at(typeType)) {
    ctx.warn(`PyType_Type at ${hex(typeType)} is not a type object in this core (its ob_type is not itself, or its fields are unreadable): no Python object named`, typeType)
    return
  }

  // 1. Every live block's object, if it holds one (typed arrays: millions of objects on a big heap).
  const foundSlot = new GrowableU32()
  const foundStart = new GrowableF64()
  const foundObject = new GrowableF64()
  const foundType = new GrowableF64()
  objects.forEachObject((slot, start, size) => {
    const o = objectInBlock(memory, layout, types, start, size)
    if (!o) return
    foundSlot.push(slot)
    foundStart.push(start)
    foundObject.push(o.address)
    foundType.push(o.type.address)
  }, live)
  const count = foundSlot.length
  const objectAt = (i: number): BlockObject => ({address: foundObject.data[i]!, type: types.at(foundType.data[i]!)!})

  // 2. The blocks they own; a block two owners claim under different names is no one's.
  const claims = new Map<number, string | null>()
  const claim = (address: number, name: string) => {
    const had = claims.get(address)
    if (had === undefined) claims.set(address, name)
    else if (had !== name) {
      if (had !== null) ctx.warn(`block ${hex(address)} is claimed as ${had} and as ${name}: named neither`, address)
      claims.set(address, null)
    }
  }
  for (let i = 0; i < count; i++) ownedBlocks(memory, layout, types, storageTypes, blockSize, objectAt(i), claim)

  // The parser's arenas: an arena's list of objects is a proven list.
  const listType = program.symbolAddress('PyList_Type')?.address
  const lists = new Set<number>()
  for (let i = 0; i < count; i++) if (foundType.data[i] === listType) lists.add(foundObject.data[i]!)
  arenas(memory, objects, live, blockSize, a => lists.has(a), claim)

  // 3. Names. A block a proven owner points to as its storage, with sizes that agree, is that
  // storage even where its first words read as an object: the prefix of a dict's values and the
  // start of a list's items are left as the block's last user wrote them (a dead object's header).
  let namedObjects = 0
  let namedStorage = 0
  let storageOverObject = 0
  for (let i = 0; i < count; i++) {
    const start = foundStart.data[i]!
    if (claims.has(start)) {
      storageOverObject++
      continue
    }
    if (names.assign(foundSlot.data[i]!, `python:${objectAt(i).type.name}`, PYTHON_OBJECT, VIA_RUNTIME, start)) namedObjects++
  }
  for (const [address, name] of claims) {
    if (name !== null && names.assign(objects.findObject(address)!.index, name, PYTHON_STORAGE, VIA_RUNTIME, address)) namedStorage++
  }
  ctx.note(
    `CPython ${version}: ${namedObjects} objects named by ob_type, ${namedStorage} storage blocks by their owners` +
      (storageOverObject ? ` (${storageOverObject} of them also read as an object: a dead one's header left in them)` : ''),
  )
}
