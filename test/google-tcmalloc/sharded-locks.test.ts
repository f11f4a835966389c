import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {hex} from '../../src/errors.js'
import {googleLocksRead} from '../../src/google-tcmalloc/activity.js'
import {analyzeGoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {Program} from '../../src/program/program.js'
import {sparseCorePath} from '../helpers/fixture-core.js'

// The sharded transfer caches' locks (Static::sharded_transfer_cache_: per shard, one
// TransferCache<BackingTransferCache, ShardedStaticForwarder> per class, its lock_ at 0), read on
// the one fixture whose build turns the shards on. gdb on the unstripped gtcdemo
// (fixtures/build/gtc/gtc-2026-08-release-regions-sharded-percpu, the same file but for its
// DWARF) and the core, walking shards_[s].transfer_caches[c].lock_ for c in 1..257:
//   num_shards_ 1 shards_ 0xea73ff09d00
//   shard 0 transfer_caches 0xea73ff81cc0 initialized true
//     class 1 &lock_ 0xea73ff81d40 word 0      class 257 &lock_ 0xea73ff89d40 word 0
//   locks 257 nonzero words 0
const ID = 'gtc-2026-08-release-regions-sharded-percpu'
const DIR = fileURLToPath(new URL(`../../fixtures/google-tcmalloc/${ID}`, import.meta.url))
const GDB = {transferCaches: 0xea73ff81cc0, cacheStride: 128, classes: 257, first: '0xea73ff81d40', last: '0xea73ff89d40'}

describe(`the sharded transfer caches' locks (${ID})`, () => {
  it("are read at gdb's addresses, one per class of the one initialized shard, none held", {timeout: 120_000}, async () => {
    const core = Core.open(await sparseCorePath(path.join(DIR, 'core.sparse.br')))
    try {
      const program = Program.load(core, {exe: path.join(DIR, 'gtcdemo')})
      const heap = analyzeGoogleHeap(program)
      const sharded = googleLocksRead(program, heap).filter(l => l.kind === 'sharded')
      expect(sharded.map(l => l.address)).toEqual(Array.from({length: GDB.classes}, (_, i) => GDB.transferCaches + (i + 1) * GDB.cacheStride))
      expect([hex(sharded[0]!.address), hex(sharded.at(-1)!.address)]).toEqual([GDB.first, GDB.last])
      expect(sharded.filter(l => l.word !== 0)).toEqual([])
      expect(sharded[0]!.label).toBe(`sharded transfer cache lock of shard 0, class 1 (${heap.classes.size[1]} B)`)
    } finally {
      core.close()
    }
  })
})
