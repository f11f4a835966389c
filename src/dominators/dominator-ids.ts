// The values an idom array holds besides object ids: apart from the dominator pass so that a query
// reading the tree from an index (index/retention-index.ts) does not load the pass.

/** idom value of a vertex dominated only by the virtual root (a root target, a leak start). */
export const BY_VIRTUAL_ROOT = 0xffff_fffe
/** idom value of an object outside the tree (free slots). */
export const NOT_IN_TREE = 0xffff_ffff
/** idom value of an object that only root group g (one thread's registers, stack and TLS) reaches: BY_GROUP − g. */
export const BY_GROUP = 0xffff_fffd

/** The root group an idom value names, or −1 when it names an object or the virtual root. */
export function groupOfIdom(idom: number, objectCount: number, groupCount: number): number {
  return idom >= objectCount && idom <= BY_GROUP && BY_GROUP - idom < groupCount ? BY_GROUP - idom : -1
}
