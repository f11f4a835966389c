import type {ServedCore} from './serve-page.js'

const cache = new WeakMap<ServedCore, Map<string, unknown>>()

/**
 * What a page computes of a core that cannot change while the server runs (the core and its index
 * are read-only), computed on the first request and kept: a second load of the page is the page
 * alone. Kept per core, so a server that is gone (with its ServedCore) leaves nothing.
 */
export function once<T>(core: ServedCore, key: string, compute: () => T): T {
  let known = cache.get(core)
  if (!known) cache.set(core, (known = new Map()))
  if (!known.has(key)) known.set(key, compute())
  return known.get(key) as T
}
