import {Uint32Blocks} from '../util/block-cache.js'
import type {FileArray} from '../util/file-array.js'

/**
 * The forward CSR as the walks over it read it (the shortest paths, the dominator pass's DFS):
 * targets of the edges of o are outTo[outStart[o] .. outStart[o+1]). Either array may be in the
 * index instead of memory (an analysis under a memory limit), read through a block cache.
 */
export interface ForwardEdges {
  outStart: Uint32Array | FileArray
  outTo: Uint32Array | FileArray
  /** What each array's block cache may hold, where it is in a file (default: 16 MiB). */
  cacheBytes?: number
  /** Elements a block (default 16,384: 64 KiB); tests make it small. */
  blockWords?: number
}

const DEFAULT_CACHE_BYTES = 16 * 2 ** 20

/** Readers of both arrays; the caller closes them. */
export function forwardReaders(edges: ForwardEdges): {starts: Uint32Blocks; targets: Uint32Blocks; close: () => void} {
  const bytes = edges.cacheBytes ?? DEFAULT_CACHE_BYTES
  const starts = new Uint32Blocks(edges.outStart, bytes, edges.blockWords)
  const targets = new Uint32Blocks(edges.outTo, bytes, edges.blockWords)
  return {starts, targets, close: () => (starts.close(), targets.close())}
}
