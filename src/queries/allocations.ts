import {hex} from '../errors.js'
import type {HeapIndex} from '../index/heap-index.js'
import {SampleIndex, type StoredSample} from '../index/sample-index.js'
import type {Program} from '../program/program.js'
import {codeLabel} from './code-label.js'

/** One frame of an allocation stack: the return address TCMalloc recorded and what the program's modules call it. */
export interface AllocationFrame {
  address: string
  /** `function+0xoff (module)`, or null when no module's symbols cover the address. */
  symbol: string | null
}

/** What the program's modules call a return address: its function (demangled), its label, its module's path. */
export interface FrameName {
  function: string | null
  symbol: string | null
  module: string | null
}

/** What TCMalloc recorded for a sampled object: the size asked for and where it was allocated, innermost frame first. */
export interface Allocation {
  requestedSize: number
  stack: AllocationFrame[]
}

/**
 * Names the return addresses of allocation stacks, each address once. A return address is looked
 * up at the call before it (codeLabel), so a call that ends a function names that function.
 */
export class StackNamer {
  private readonly names = new Map<number, FrameName>()

  constructor(private readonly program: Program) {}

  name(pc: number): FrameName {
    let n = this.names.get(pc)
    if (!n) {
      const c = codeLabel(this.program, pc, false)
      const module = this.program.symbolize(pc - 1)?.module.module.path ?? null
      n = {function: c.function, symbol: c.label === hex(pc) ? null : c.label, module}
      this.names.set(pc, n)
    }
    return n
  }

  allocation(sample: StoredSample): Allocation {
    return {requestedSize: sample.requestedSize, stack: sample.stack.map(pc => ({address: hex(pc), symbol: this.name(pc).symbol}))}
  }
}

/** The allocation record of the object in a span, or null when TCMalloc did not sample it. */
export function allocationOfSpan(program: Program, index: HeapIndex, span: number): Allocation | null {
  const sample = new SampleIndex(index).ofSpan(span)
  return sample ? new StackNamer(program).allocation(sample) : null
}

/** Every sampled object's allocation record, by object slot. */
export function sampledAllocations(program: Program, index: HeapIndex): Map<number, Allocation> {
  const namer = new StackNamer(program)
  const out = new Map<number, Allocation>()
  for (const s of new SampleIndex(index)) out.set(s.object, namer.allocation(s))
  return out
}
