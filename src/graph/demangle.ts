import {demangle} from '../elf/demangle.js'

export {demangle}

/** Drops the `[clone .localalias]`-style suffixes the demangler appends for GCC symbol suffixes. */
function stripClones(text: string): string {
  let s = text
  for (;;) {
    const m = / \[clone [^\]]*\]$/.exec(s)
    if (!m) return s
    s = s.slice(0, m.index)
  }
}

/**
 * The class a `_ZTV…` symbol is the vtable of (`_ZTVN3app5OrderE` → `app::Order`), or null when
 * the name does not demangle to a vtable (`vtable for X`; cpp_demangle's own `{vtable(X)}` is
 * accepted too).
 */
export function classOfVtableSymbol(symbol: string): string | null {
  const text = stripClones(demangle(symbol))
  if (text.startsWith('{vtable(') && text.endsWith(')}')) return nonEmpty(text.slice(8, -2))
  if (text.startsWith('vtable for ')) return nonEmpty(text.slice(11))
  return null
}

/**
 * The type named by the string a `std::type_info` points at (`N3app5OrderE` → `app::Order`; a
 * leading `*`, which GCC writes for types local to a translation unit, is ignored), or null.
 */
export function typeOfTypeinfoName(mangled: string): string | null {
  const name = mangled.startsWith('*') ? mangled.slice(1) : mangled
  if (name === '' || !/^[A-Za-z0-9_$.]+$/.test(name)) return null
  const text = stripClones(demangle('_ZTS' + name))
  if (text.startsWith('typeinfo name for ')) return nonEmpty(text.slice(18))
  if (text.startsWith('{typeinfo name(') && text.endsWith(')}')) return nonEmpty(text.slice(15, -2))
  return null
}

function nonEmpty(s: string): string | null {
  return s === '' ? null : s
}
