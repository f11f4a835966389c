import {PF_W, PF_X} from '../core/core-header.js'
import type {Segment} from '../core/address-space.js'
import type {LoadedModule, Program} from '../program/program.js'
import type {AllocatorModule} from './heap-model.js'

/**
 * The module that holds an allocator as the layers above need it: its writable data (with the
 * anonymous .bss mapping right after it) and its code ranges. Any allocator model hands its
 * module over through this.
 */
export function describeAllocatorModule(program: Program, loaded: LoadedModule): AllocatorModule {
  const memory = program.core.memory
  const mapped = loaded.module.mappings
  const inModule = (s: Segment) => mapped.some(f => s.start < f.end && s.end > f.start)
  const data: Segment[] = []
  const segments = memory.segments
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!
    if (!inModule(s) || !(s.flags & PF_W)) continue
    data.push(s)
    // .bss beyond the file's last page is an anonymous mapping right after the RW segment.
    const next = segments[i + 1]
    if (next && next.start === s.end && next.flags & PF_W && !program.core.fileAt(next.start)) data.push(next)
  }
  // Code ranges: the core rarely dumps text, so take them from the file's executable PT_LOADs.
  const code: Array<[number, number]> = []
  for (const seg of loaded.file?.segments ?? []) {
    if (seg.type === 1 && seg.flags & PF_X) code.push([seg.vaddr + loaded.module.loadBias, seg.vaddr + seg.memsz + loaded.module.loadBias])
  }
  if (code.length === 0) {
    for (const s of segments) if (inModule(s) && s.flags & PF_X) code.push([s.start, s.end])
  }
  if (code.length === 0) {
    // Neither file nor dumped text: any address inside the module's mappings will do as a weaker test.
    for (const f of mapped) code.push([f.start, f.end])
  }
  return {
    loaded,
    dataSegments: [...new Set(data)],
    isCode: (addr: number) => code.some(([a, b]) => addr >= a && addr < b),
  }
}
