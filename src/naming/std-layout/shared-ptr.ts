import type {NamingContext} from '../recogniser.js'
import {VIA_VTABLE} from '../via.js'
import {templateArguments} from './template-arguments.js'
import type {Probe} from './probe.js'

const COUNTED_PTR = 'std::_Sp_counted_ptr<'
/** _M_ptr: after the vptr and the two 32-bit counts. */
const POINTER_OFFSET = 16

/**
 * The objects `std::shared_ptr<T>(new Y)` owns, named Y from their control block: a
 * `std::_Sp_counted_ptr<Y*, _Lock_policy>` (libstdc++), which has a vtable, so the vtable tier
 * named it. Its `_M_ptr` (at +16) is the pointer it will delete as a Y*: for a class without a
 * vtable, deleting a derived object through it would be undefined, so Y is the object's type. Named
 * only when the pointer is the start of a live unnamed block (a polymorphic Y has its own vtable
 * name already; a pointer into a block is a base subobject, not named). make_shared's
 * `_Sp_counted_ptr_inplace<T, …>` holds T inside the control block: nothing to name apart.
 */
export function nameSharedPointees(ctx: NamingContext, p: Probe): number {
  const pointee = new Map<number, string>()
  ctx.names.names.forEach((name, i) => {
    if (!name.startsWith(COUNTED_PTR) || !name.endsWith('>')) return
    const args = templateArguments(name.slice(COUNTED_PTR.length, -1))
    if (args?.length === 2 && args[0]!.endsWith('*')) pointee.set(i + 1, args[0]!.slice(0, -1).trim())
  })
  if (pointee.size === 0) return 0
  let named = 0
  const {typeOf, via} = ctx.names
  ctx.objects.forEachObject((id, start, size) => {
    const type = pointee.get(typeOf[id]!)
    if (type === undefined || via[id] !== VIA_VTABLE || size < POINTER_OFFSET + 8) return
    const b = p.block(p.word(start + POINTER_OFFSET))
    if (!b) return
    p.name(b, type, 'object')
    named++
  }, ctx.live)
  return named
}
