import type {GoogleLayout} from './layout.js'

/**
 * The google/tcmalloc layouts toma knows, newest family first. Each offset was read with gdb's
 * `ptype /o` from the DWARF of a build of the family's snapshot (fixtures/build-google-tcmalloc.sh;
 * docs/GOOGLE-TCMALLOC.md lists them and the commits each family covers).
 */
export const GOOGLE_TCMALLOC_LAYOUTS: readonly GoogleLayout[] = [
  {
    family: '2026-08',
    covers: 'google/tcmalloc from 77fbeb5 (2026-08-12, PageMap3) to fce3f55 (2026-08-21)',
    pageMap: {levels: 3, packed: true},
    span: {
      size: 128,
      embedCount: 24,
      freelist: 26,
      allocated: 28,
      cacheSize: 30,
      record: {kind: 'bitfields', bitsWord: 32, isLargeAfter: 0, sampledAfter: 1, smallNumPagesAfter: 3},
      union: 48,
      cacheEntries: 12,
      bitmapBits: 192,
    },
    shifts: {
      '13': {
        numClasses: 258,
        classToSize: 26544,
        classToPages: 26286,
        slabInCpuCache: 0,
        threadCacheList: 0,
        threadCacheNext: 6224,
        backEnd: {
          normalImpl: 2444760,
          sampledImpl: 2444776,
          coldImpl: 2444792,
          hasColdImpl: 2444804,
          regionsCount: 798520,
          allocatorFreeRoot: 798688,
          cacheRoot: 798784,
          trackerSize: 352,
          trackerLocation: 24,
          trackerUsed: 64,
          trackerReleased: 176,
          nodeSize: 64,
          nodeFirst: 0,
          nodeCount: 8,
          nodeLeft: 24,
          nodeRight: 32,
        },
      },
    },
    slab: {slabsAndShift: 0, cpuCount: 16, begins: 24, headerBytes: 4},
    transferCache: {stride: 1728, slotInfo: 32, slots: 40, centralFreeList: 48, owner: 1616},
    centralFreeList: {},
    threadCache: {freeListStride: 24, freeListHead: 0, freeListLength: 8},
    sampledAllocation: {size: 624, requestedSize: 32, depth: 104, stack: 112, maxDepth: 64},
  },
]
