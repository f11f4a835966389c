import type {HeapIndex} from '../index/heap-index.js'
import type {Program} from '../program/program.js'

/** An index opened for a query (open-index.ts), as a shell's session keeps it (index-session.ts). */
export interface OpenedIndex {
  index: HeapIndex
  corePath: string
  indexPath: string
  /** The core with its module files, found as the analysis found them unless flags say otherwise. */
  program(): Program
}
