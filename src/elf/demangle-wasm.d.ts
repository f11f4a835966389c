// Types for the wasm-bindgen glue of gecko-profiler-demangle. The package's own index.js imports
// the .wasm file as an ES module, which Node 20 cannot do, so demangle.ts instantiates the .wasm
// itself and hands its exports to this glue file.
declare module 'gecko-profiler-demangle/index_bg.js' {
  export function __wbg_set_wasm(exports: WebAssembly.Exports): void
  export function __wbindgen_init_externref_table(): void
  export function demangle_any(name: string): string
}
