import {demangle} from '../../graph/demangle.js'
import type {Program} from '../../program/program.js'
import {lastAtOrBelow} from '../../util/search.js'
import type {Block, Probe} from './probe.js'
import {templateArguments} from './template-arguments.js'

const HANDLER = 'std::_Function_handler<'

/**
 * A libstdc++ `std::function` at `owner` whose target is stored on the heap: {functor pointer,
 * (unused), _M_manager, _M_invoker}. The manager is `std::_Function_handler<Sig, Functor>::
 * _M_manager`, the invoker the same handler's `_M_invoke`: both symbols, at offset 0, name the
 * functor's type. Needs the executable's symbols (.symtab or its debug file): without them the
 * target is left unnamed, never guessed.
 */
export function functionTargetAt(p: Probe, owner: number, target: Block, handlers: Handlers): boolean {
  if (!p.holds(owner, owner + 32)) return false
  const manager = handlers.of(p.word(owner + 16), '_M_manager')
  if (manager === null || handlers.of(p.word(owner + 24), '_M_invoke') !== manager) return false
  const functor = templateArguments(manager)?.at(-1)
  if (functor === undefined) return false
  p.name(target, functor, 'std::function target')
  return true
}

/**
 * The handler a code address is a member of, looked up once per address: most words tested are
 * not code at all (rejected by the modules' address ranges, with no symbol lookup).
 */
export class Handlers {
  private readonly starts: Float64Array
  private readonly ends: Float64Array
  private readonly known = new Map<number, string | null>()

  constructor(private readonly program: Program) {
    const ranges = program.modules.flatMap(m => m.module.mappings.map(r => [r.start, r.end] as const)).sort((a, b) => a[0] - b[0])
    this.starts = Float64Array.from(ranges, r => r[0])
    this.ends = Float64Array.from(ranges, r => r[1])
  }

  /** Whether addr lies in some module's mapping (code is there; most words tested are not). */
  inModule(addr: number | undefined): boolean {
    if (addr === undefined || addr === 0) return false
    const i = lastAtOrBelow(this.starts, addr)
    return i >= 0 && addr < this.ends[i]!
  }

  /** The handler's template arguments (`long (long), f()::{lambda(long)#1}`) of `member` at `addr`, else null. */
  of(addr: number | undefined, member: '_M_manager' | '_M_invoke'): string | null {
    if (addr === undefined || !this.inModule(addr)) return null
    let text = this.known.get(addr)
    if (text === undefined) {
      const s = this.program.symbolize(addr)
      text = s?.symbol && s.offset === 0 ? demangle(s.symbol.name) : null
      this.known.set(addr, text)
    }
    if (text === null || !text.startsWith(HANDLER)) return null
    const end = text.indexOf(`>::${member}(`)
    return end < 0 ? null : text.slice(HANDLER.length, end)
  }
}
