import {PT_TLS} from '../elf/constants.js'
import {hex} from '../errors.js'
import type {Program} from './program.js'

/**
 * The executable's thread-local variable at `address` in the thread whose thread pointer is
 * `threadPointer` (fs_base), as `tls_region+0x0 (TLS of glibcheap)`, or undefined. On x86-64
 * (TLS_TCB_AT_TP) glibc gives the executable the first block below the thread pointer, at
 * roundup(p_memsz, p_align) when its PT_TLS starts aligned (_dl_determine_tlsoffset); the
 * libraries' blocks follow in an order ld.so decides at run time, so only the executable's
 * variables are named.
 */
export function executableTlsVariable(program: Program, threadPointer: number, address: number): string | undefined {
  const exe = program.executable
  const tls = exe?.file?.segments.find(s => s.type === PT_TLS)
  if (!exe?.file || !tls || tls.memsz <= 0) return undefined
  const align = Math.max(1, tls.align)
  if (tls.vaddr % align !== 0) return undefined
  const blockStart = threadPointer - Math.ceil(tls.memsz / align) * align
  const offset = address - blockStart
  if (offset < 0 || offset >= tls.memsz) return undefined
  const found = exe.file.tlsSymbolAt(offset)
  if (!found) return undefined
  return `${found.symbol.name}+${hex(found.offset)} (TLS of ${exe.module.path.split('/').pop()})`
}
