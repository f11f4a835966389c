import {hex} from '../errors.js'
import {demangle} from '../elf/demangle.js'
import {withoutVersion} from '../elf/symbol-version.js'
import {describeSymbolic, type Program} from '../program/program.js'

/** A code address as people read it: `function+0xoff (module)`, demangled; `module+0xoff` outside every symbol. */
export function codeLabel(program: Program, pc: number, exact = true): {function: string | null; label: string} {
  // A return address is looked up at the call before it, so a call at a function's very end names that function.
  const s = program.symbolize(exact ? pc : pc - 1)
  if (!s) return {function: null, label: hex(pc)}
  // A versioned name from a debug file's symbol table (pthread_cond_wait@@GLIBC_2.3.2) is named as gdb names it.
  const symbol = s.symbol ? {...s.symbol, name: withoutVersion(s.symbol.name)} : null
  return {function: symbol ? demangle(symbol.name) : null, label: describeSymbolic({...s, symbol, offset: s.offset + (exact ? 0 : 1)})}
}
