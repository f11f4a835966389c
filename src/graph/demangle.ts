import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import * as glue from 'gecko-profiler-demangle/index_bg.js'

/**
 * Symbol demangling through gecko-profiler-demangle: the Rust `cpp_demangle`/`rustc-demangle`
 * crates compiled to WebAssembly (Mozilla's profiler uses it; no native code).
 *
 * The package's index.js does `import * as wasm from "./index_bg.wasm"`, which Node 20 does not
 * support, so the .wasm is compiled here synchronously on first use and its exports are handed to
 * the package's wasm-bindgen glue (`__wbg_set_wasm`), exactly what index.js would have done.
 */

let ready = false

function load(): void {
  const wasmPath = createRequire(import.meta.url).resolve('gecko-profiler-demangle/index_bg.wasm')
  const module = new WebAssembly.Module(readFileSync(wasmPath))
  const instance = new WebAssembly.Instance(module, {'./index_bg.js': glue as unknown as WebAssembly.ModuleImports})
  glue.__wbg_set_wasm(instance.exports)
  ;(instance.exports.__wbindgen_start as () => void)()
  ready = true
}

/** Names the demanglers understand: Itanium C++ (`_Z`, `__Z` on Mach-O) and Rust v0 (`_R`). */
const MANGLED = /^(?:_{1,2}Z|_R)[A-Za-z0-9_]/

/**
 * The demangled form of a symbol name, or the input unchanged when it is not a mangled name or
 * cannot be demangled. Never throws.
 *
 * demangle_any's own "not mangled" answer is not the input: it strips one leading underscore
 * (`_start` → `start`, `_ZTV` → `ZTV`), so only names that look mangled are passed to it, and an
 * answer that is just the input minus its first character counts as a failure.
 */
export function demangle(name: string): string {
  if (!MANGLED.test(name)) return name
  try {
    if (!ready) load()
    const out = glue.demangle_any(name)
    if (out === '' || out === name.slice(1)) return name
    return out
  } catch {
    // A trap (Rust panic) may leave the instance unusable: start a fresh one next time.
    ready = false
    return name
  }
}

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
 * the name does not demangle to a vtable. The demangler writes `{vtable(X)}`; the binutils style
 * `vtable for X` is accepted too.
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
