import type {IndexFile} from './index-file.js'
import type {ArrayOf} from './schema.js'
import type {Blocks} from '../util/block-cache.js'

/**
 * The index's per-object arrays (and the dominator tree, the forward edges and the thread list)
 * read whole, for the answers that walk every object: leaks, classes, holders, diffs, the export.
 * Each call reads its array again: a caller keeps what it needs as long as it needs it, no longer.
 */
export class ObjectColumns {
  constructor(private readonly file: IndexFile) {}

  /** Each slot's name id (0: none; HeapIndex.typeName names the others). */
  type(): ArrayOf<'object.type'> {
    return this.file.array('object.type')
  }

  /** The name ids of slots [from, from + count) (one ranged read: a scan that stops early reads no more). */
  typeRange(from: number, count: number): ArrayOf<'object.type'> {
    return this.file.slice('object.type', from, count)
  }

  /** The state bytes of slots [from, from + count) (heap/states.ts). */
  stateRange(from: number, count: number): Uint8Array {
    return this.file.slice('object.state', from, count)
  }

  /** How each slot's name was known (naming/via.ts). */
  via(): Uint8Array {
    return this.file.array('object.via')
  }

  /** Per slot: reached from a root, not reached, or the allocator's own (graph/allocator-internal.ts). */
  reachable(): Uint8Array {
    return this.file.array('object.reachable')
  }

  retainedBytes(): Float64Array {
    return this.file.array('object.retainedBytes')
  }

  retainedObjects(): Uint32Array {
    return this.file.array('object.retainedObjects')
  }

  /** Immediate dominators (dominators/dominator-ids.ts). */
  idom(): Uint32Array {
    return this.file.array('object.idom')
  }

  /** The dominator tree's child lists: where each node's start in `child`, the virtual root's last. */
  dominatorTree(): {childStart: Uint32Array; child: Uint32Array} {
    return {childStart: this.file.array('dom.childStart'), child: this.file.array('dom.child')}
  }

  /**
   * The columns the holder walk reads (queries/holder-groups.ts), each read at random through a
   * cache of blocks of `cacheBytes` of its own instead of whole: the walk under a memory limit
   * (`blockWords`: elements a block; tests make it small).
   */
  throughBlocks(cacheBytes: number, blockWords?: number): {childStart: Blocks<Uint32Array>; child: Blocks<Uint32Array>; idom: Blocks<Uint32Array>; reachable: Blocks<Uint8Array>; retainedBytes: Blocks<Float64Array>; retainedObjects: Blocks<Uint32Array>; type: Blocks<Uint16Array | Uint32Array>} {
    const f = this.file
    return {
      type: f.blocks('object.type', cacheBytes, blockWords),
      childStart: f.blocks('dom.childStart', cacheBytes, blockWords),
      child: f.blocks('dom.child', cacheBytes, blockWords),
      idom: f.blocks('object.idom', cacheBytes, blockWords),
      reachable: f.blocks('object.reachable', cacheBytes, blockWords),
      retainedBytes: f.blocks('object.retainedBytes', cacheBytes, blockWords),
      retainedObjects: f.blocks('object.retainedObjects', cacheBytes, blockWords),
    }
  }

  /**
   * The name ids, holders and states of slots read at random through caches of blocks of `cacheBytes`
   * each, for answers that label a few objects here and there (the memory report's pinned spans):
   * a few blocks read, not two columns of 6 bytes a slot. No holders before the graph.
   */
  labelBlocks(cacheBytes: number, withHolders: boolean): {type: Blocks<Uint16Array | Uint32Array>; holder: Blocks<Int32Array> | null; state: Blocks<Uint8Array>} {
    return {type: this.file.blocks('object.type', cacheBytes), holder: withHolders ? this.file.blocks('object.holder', cacheBytes) : null, state: this.file.blocks('object.state', cacheBytes)}
  }

  /** The core's threads by tid, in the order of the per-thread arrays and the idom thread groups. */
  threadTids(): Int32Array {
    return this.file.array('thread.tid')
  }

  /** Thread groups of the dominator tree (one per thread of the core). */
  threadGroupCount(): number {
    return this.file.length('thread.retainedBytes')
  }

  /** Each slot's holder in the holder table (−1: no holder: named, free, TCMalloc's own). */
  holderOf(): Int32Array {
    return this.file.array('object.holder')
  }

  /** Where in its holder each slot's chain starts (0xffffffff: not read). */
  holderOffset(): Uint32Array {
    return this.file.array('object.holderOffset')
  }

  /** Where each object's edges start in the edge targets, and one more. */
  outStart(): Uint32Array {
    return this.file.array('edge.outStart')
  }

  edgeCount(): number {
    return this.file.length('edge.to')
  }

  /** Edge targets [from, from + count), read at once (fewer at the end). */
  edgeTargets(from: number, count: number): Uint32Array {
    return this.file.slice('edge.to', from, count)
  }

  /** Live objects before each block of PUBLIC_ID_BLOCK slots, then all of them: entries [block, block + count). */
  liveBefore(block: number, count = 1): Uint32Array {
    return this.file.slice('object.liveBefore', block, count)
  }

  liveBeforeLength(): number {
    return this.file.length('object.liveBefore')
  }

  /** Slot states [from, from + count). */
  states(from: number, count: number): Uint8Array {
    return this.file.slice('object.state', from, count)
  }
}
