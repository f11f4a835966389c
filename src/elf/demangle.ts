import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import * as glue from 'gecko-profiler-demangle/index_bg.js'

/**
 * Symbol demangling through gecko-profiler-demangle: the Rust `cpp_demangle`/`rustc-demangle`
 * crates compiled to WebAssembly (Mozilla's profiler uses it; no native code). It lives with the
 * symbol tables because every layer that names an address needs it, not only the type graph.
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

function demangleOnce(name: string): string | null {
  try {
    if (!ready) load()
    const out = glue.demangle_any(name)
    return out === '' || out === name.slice(1) ? null : out
  } catch {
    // A trap (Rust panic) may leave the instance unusable: start a fresh one next time.
    ready = false
    return null
  }
}

/**
 * cpp_demangle writes special names its own way; gdb, c++filt and every C++ programmer read the
 * libiberty way (`vtable for X`, `non-virtual thunk to X`, `(anonymous namespace)`).
 */
const SPECIAL: [RegExp, string][] = [
  [/^\{vtable\((.*)\)\}$/s, 'vtable for $1'],
  [/^\{vtt\((.*)\)\}$/s, 'VTT for $1'],
  [/^\{virtual override thunk\(\{(?:virtual )?offset\([^)]*\)\}, \{(?:virtual )?offset\([^)]*\)\}, (.*)\)\}$/s, 'covariant return thunk to $1'],
  [/^\{virtual override thunk\(\{offset\([^)]*\)\}, (.*)\)\}$/s, 'non-virtual thunk to $1'],
  [/^\{virtual override thunk\(\{virtual offset\([^)]*\)\}, (.*)\)\}$/s, 'virtual thunk to $1'],
]

function libiberty(text: string): string {
  let s = text.replace(/(^|[^A-Za-z0-9_])_GLOBAL__N_1(?![A-Za-z0-9_])/g, '$1(anonymous namespace)')
  for (const [pattern, to] of SPECIAL) {
    if (pattern.test(s)) {
      s = s.replace(pattern, to)
      break
    }
  }
  return s
}

/**
 * The demangled form of a symbol name, or the input unchanged when it is not a mangled name or
 * cannot be demangled. Never throws.
 *
 * demangle_any's own "not mangled" answer is not the input: it strips one leading underscore
 * (`_start` → `start`, `_ZTV` → `ZTV`), so only names that look mangled are passed to it, and an
 * answer that is just the input minus its first character counts as a failure. GCC's `_ZL` prefix
 * (internal linkage, `_ZL10g_counter`), which cpp_demangle refuses, is read as the plain `_Z` name,
 * as c++filt does.
 */
export function demangle(name: string): string {
  if (!MANGLED.test(name)) return name
  // A version (`@@GLIBCXX_3.4`) or a PLT stub's `@plt` follows the mangled name, which holds no
  // `@`: the name is demangled and the suffix kept, as c++filt and gdb do.
  const at = name.indexOf('@')
  if (at > 0) return demangle(name.slice(0, at)) + name.slice(at)
  return plainVtable(name) ?? demangleWithWasm(name)
}

/** `demangle` by the WASM demangler alone (test/elf/demangle.test.ts compares the shortcut with it). */
export function demangleWithWasm(name: string): string {
  const out = demangleOnce(name) ?? (name.startsWith('_ZL') ? demangleOnce('_Z' + name.slice(3)) : null)
  return out === null ? name : libiberty(out)
}

/**
 * The vtable of a class named by plain source names only (`_ZTVN3app8CustomerE` → `vtable for
 * app::Customer`, `_ZTV6Widget`), read without the WASM demangler: it is the word at the start of
 * most C++ objects, and the demangler's first use costs a query about 10 ms. Null for any other
 * form (templates, substitutions such as `St`, qualifiers), which the demangler reads.
 */
function plainVtable(name: string): string | null {
  const nested = /^_ZTVN(\w+)E$/.exec(name)
  const text = nested ? nested[1] : /^_ZTV(\d\w*)$/.exec(name)?.[1]
  if (text === undefined) return null
  const parts: string[] = []
  for (let at = 0; at < text.length; ) {
    const length = /^[1-9]\d*/.exec(text.slice(at))?.[0]
    if (!length) return null
    const id = text.slice(at + length.length, at + length.length + Number(length))
    if (id.length !== Number(length) || !/^[A-Za-z_]\w*$/.test(id)) return null
    parts.push(id)
    at += length.length + id.length
  }
  // A nested name has at least two parts; a bare one is one source name.
  if (nested ? parts.length < 2 : parts.length !== 1) return null
  return libiberty(`vtable for ${parts.join('::')}`)
}
