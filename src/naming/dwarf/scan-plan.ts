import {sizeOf, stripAliases, type DwarfType, type StructType} from '../../elf/dwarf/types.js'
import {MAX_ELEMENTS} from './container-flow.js'
import {scalarPointee} from './scalar-pointees.js'
import {containerOf, type Container} from './std-containers.js'

/** Structs nested inside one another deeper than this are damage. */
export const MAX_NESTING = 64
/** Arrays of at most this many elements are laid flat in their holder's plan; longer ones are a loop. */
const FLAT_ELEMENTS = 16

/** One thing scanning a value reads, at `at` bytes from its start. */
export type ScanStep =
  /** A pointer to `target`: its word is read and followed. */
  | {at: number; target: DwarfType; container: null; element: null}
  /** A standard container (std-containers.ts) of type `type`. */
  | {at: number; target: null; container: Container; type: StructType; element: null}
  /** `count` elements of `element`, `size` bytes apart, each scanned at nesting `depth`. */
  | {at: number; target: null; container: null; element: DwarfType; count: number; size: number; depth: number}

/**
 * What scanning a value of a type reads, found once per type: its pointers and containers at
 * their offsets, through its bases, members and short arrays laid flat, in the order a walk over
 * the type meets them. Scanning a value then reads those words and nothing else: walking the
 * type's members for each value (four million values on workloaddemo's timing core), with their
 * aliases stripped and each one's `hasPointers` looked up, was a quarter of the flow's CPU.
 */
export class ScanPlans {
  /** Per nesting depth a plan starts at (the flow's values start at 0; long arrays' elements deeper). */
  private readonly plans: Array<WeakMap<DwarfType, ScanStep[]>> = []

  constructor(private readonly hasPointers: (type: DwarfType) => boolean) {}

  /** The steps of a value of `type` scanned at nesting `depth`. */
  of(type: DwarfType, depth: number): ScanStep[] {
    const byType = (this.plans[depth] ??= new WeakMap())
    let steps = byType.get(type)
    if (!steps) {
      steps = []
      this.add(type, 0, depth, steps)
      byType.set(type, steps)
    }
    return steps
  }

  private add(type: DwarfType, at: number, depth: number, out: ScanStep[]): void {
    const t = stripAliases(type)
    if (depth > MAX_NESTING) return
    if (t.kind === 'pointer') {
      if (t.target) out.push({at, target: t.target, container: null, element: null})
    } else if (t.kind === 'struct') {
      if (t.union) return
      const container = containerOf(t)
      if (container) {
        out.push({at, target: null, container, type: t, element: null})
        return
      }
      for (const b of t.bases) if (this.hasPointers(b.type)) this.add(b.type, at + b.offset, depth + 1, out)
      // A scalar pointer inside the library's own helpers (a stream's buffer pointers, a
      // string_view's data) is a view as often as an owner: not followed.
      const std = isStdInternal(t.name)
      for (const m of t.members) if (this.hasPointers(m.type) && !(std && isScalarPointer(m.type))) this.add(m.type, at + m.offset, depth + 1, out)
    } else if (t.kind === 'array' && this.hasPointers(t.element)) {
      const size = sizeOf(t.element)
      const count = Math.min(t.count, MAX_ELEMENTS)
      if (size <= 0 || count <= 0) return
      if (count <= FLAT_ELEMENTS) for (let i = 0; i < count; i++) this.add(t.element, at + i * size, depth + 1, out)
      else out.push({at, target: null, container: null, element: t.element, count, size, depth: depth + 1})
    }
  }
}

/** A pointer to a scalar (`char*`, `long*`, `Item**`). */
function isScalarPointer(type: DwarfType): boolean {
  const t = stripAliases(type)
  return t.kind === 'pointer' && t.target !== null && scalarPointee(t.target) !== undefined
}

/** The standard library's own helper types (`std::_Rb_tree_node_base`, `std::_Head_base<…>`): followed, never a name. */
export function isStdInternal(name: string): boolean {
  return name.startsWith('std::') || name.startsWith('__gnu_cxx::')
}
