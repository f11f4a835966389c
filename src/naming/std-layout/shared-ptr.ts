import type {NamingContext} from '../recogniser.js'
import {VIA_VTABLE} from '../via.js'
import {templateArguments} from './template-arguments.js'
import type {Probe} from './probe.js'

/** The control blocks that own a `new Y`, by the prefix of their name, and where they keep the pointer. */
const OWNERS = [
  // libstdc++: {vptr, use count, weak count (32 bits each), _M_ptr}.
  {prefix: 'std::_Sp_counted_ptr<', offset: 16, args: 2},
  // libc++: {vptr, shared owners, shared weak owners, __data_ {Y*, deleter}, allocator}.
  {prefix: 'std::__1::__shared_ptr_pointer<', offset: 24, args: 3},
]

/**
 * The objects `std::shared_ptr<T>(new Y)` owns, named Y from their control block: libstdc++'s
 * `std::_Sp_counted_ptr<Y*, _Lock_policy>` or libc++'s `std::__1::__shared_ptr_pointer<Y*,
 * Deleter, Alloc>`, which have vtables, so the vtable tier named them. The pointer they keep (at
 * +16, +24) is deleted as a Y*: for a class without a vtable, deleting a derived object through it
 * would be undefined, so Y is the object's type. Named only when the pointer is the start of a
 * live unnamed block (a polymorphic Y has its own vtable name already; a pointer into a block is a
 * base subobject, not named). make_shared's control block holds T inside itself: nothing to name
 * apart.
 */
export function nameSharedPointees(ctx: NamingContext, p: Probe): number {
  const pointee = new Map<number, {type: string; offset: number}>()
  ctx.names.names.forEach((name, i) => {
    const owner = OWNERS.find(o => name.startsWith(o.prefix) && name.endsWith('>'))
    if (!owner) return
    const args = templateArguments(name.slice(owner.prefix.length, -1))
    if (args?.length === owner.args && args[0]!.endsWith('*')) pointee.set(i + 1, {type: args[0]!.slice(0, -1).trim(), offset: owner.offset})
  })
  if (pointee.size === 0) return 0
  let named = 0
  const {typeOf, via} = ctx.names
  ctx.objects.forEachObject((id, start, size) => {
    const owned = pointee.get(typeOf[id]!)
    if (owned === undefined || via[id] !== VIA_VTABLE || size < owned.offset + 8) return
    const b = p.block(p.word(start + owned.offset))
    if (!b) return
    p.name(b, owned.type, 'object')
    named++
  }, ctx.live)
  return named
}
