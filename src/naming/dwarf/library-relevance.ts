import {PF_W, PT_LOAD} from '../../elf/constants.js'
import type {LoadedModule} from '../../program/program.js'
import {unwindThread} from '../../program/unwind.js'
import type {NamingContext} from '../recogniser.js'
import {u64le} from '../../util/u64le.js'

/** A library's writable image past this is not searched (its DWARF is then read). */
const MAX_IMAGE_BYTES = 64 << 20
const CHUNK = 64 << 10

/**
 * Whether a library's DWARF can name anything: some word of its writable image (its globals)
 * points into a live heap block, or some thread has a frame in its code. Reading a library's
 * DWARF costs far more than this look (libm's debug file: 0.6 s and 30 MB), and most libraries'
 * globals hold no heap pointer at all. The executable's DWARF is always read.
 */
export function libraryCanName(ctx: NamingContext, module: LoadedModule): boolean {
  const file = module.file
  if (!file) return false
  const bias = module.module.loadBias
  const inModule = (pc: number) => ctx.program.moduleAt(pc) === module
  for (const thread of ctx.program.core.threads) {
    if (unwindThread(ctx.program, thread).frames.some(f => inModule(f.pc))) return true
  }
  const memory = ctx.program.core.memory
  for (const seg of file.segments) {
    if (seg.type !== PT_LOAD || (seg.flags & PF_W) === 0) continue
    const start = Math.ceil((seg.vaddr + bias) / 8) * 8
    const end = Math.min(seg.vaddr + bias + seg.memsz, start + MAX_IMAGE_BYTES)
    if (seg.memsz > MAX_IMAGE_BYTES) return true
    for (let at = start; at < end; at += CHUNK) {
      const bytes = memory.readBytes(at, Math.min(CHUNK, end - at) - (Math.min(CHUNK, end - at) % 8))
      if (!bytes) continue
      for (let i = 0; i + 8 <= bytes.length; i += 8) {
        const word = u64le(bytes, i)
        if (word === 0) continue
        const ref = ctx.objects.findObject(word)
        if (ref && ctx.objects.state[ref.index] === ctx.live) return true
      }
    }
  }
  return false
}
