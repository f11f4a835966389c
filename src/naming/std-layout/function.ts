import type {ObjectRef} from '../../tcmalloc/heap-objects.js'
import {demangle} from '../../graph/demangle.js'
import type {Probe} from './probe.js'

const HANDLER = 'std::_Function_handler<'

/**
 * A libstdc++ `std::function` at `owner` whose target is stored on the heap: {functor pointer,
 * (unused), _M_manager, _M_invoker}. The manager is `std::_Function_handler<Sig, Functor>::
 * _M_manager`, the invoker the same handler's `_M_invoke`: both symbols, at offset 0, name the
 * functor's type. Needs the executable's symbols (.symtab or its debug file): without them the
 * target is left unnamed, never guessed.
 */
export function functionTargetAt(p: Probe, owner: number, target: ObjectRef): boolean {
  if (!p.holds(owner, owner + 32)) return false
  const manager = handlerOf(p, p.word(owner + 16), '_M_manager')
  if (manager === null || handlerOf(p, p.word(owner + 24), '_M_invoke') !== manager) return false
  const functor = lastTemplateArgument(manager)
  if (functor === null) return false
  p.name(target, functor, 'std::function target')
  return true
}

/** The handler's template arguments (`long (long), f()::{lambda(long)#1}`) of a member's symbol at `addr`. */
function handlerOf(p: Probe, addr: number | undefined, member: string): string | null {
  if (addr === undefined || addr === 0) return null
  const s = p.ctx.program.symbolize(addr)
  if (!s?.symbol || s.offset !== 0) return null
  const text = demangle(s.symbol.name)
  const tail = `>::${member}(`
  if (!text.startsWith(HANDLER)) return null
  const end = text.indexOf(tail)
  return end < 0 ? null : text.slice(HANDLER.length, end)
}

/** The last top-level argument of a template argument list, or null when the brackets do not balance. */
export function lastTemplateArgument(args: string): string | null {
  let depth = 0
  let cut = -1
  for (let i = 0; i < args.length; i++) {
    const c = args[i]
    if (c === '<' || c === '(' || c === '[' || c === '{') depth++
    else if (c === '>' || c === ')' || c === ']' || c === '}') depth--
    else if (c === ',' && depth === 0) cut = i
    if (depth < 0) return null
  }
  if (depth !== 0) return null
  const last = args.slice(cut + 1).trim()
  return last === '' ? null : last
}
