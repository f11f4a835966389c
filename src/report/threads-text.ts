import chalk from 'chalk'
import type {ThreadList, ThreadStack} from '../queries/threads.js'
import {bytes, table} from './table.js'
import {printableData} from '../util/printable.js'
import {byteSize, frameHowText, objectKind, offset, signalText} from './wording.js'

export function threadsText(list: ThreadList): string {
  const t = printableData(list)
  const out = [
    table(
      ['#tid', 'start routine', 'stack used / size', '#thread cache', '#held only by it', 'frames'],
      t.threads.map(x => [
        String(x.tid), // an id, not a quantity: no thousands separator
        (x.startRoutine ?? chalk.dim('(main or unknown)')) + (x.crashed ? chalk.red(` ← signal ${x.signal}`) : ''),
        `${bytes(x.stack.used)} / ${x.stack.size === null ? '?' : bytes(x.stack.size)}`,
        x.threadCacheBytes,
        x.onlyThisThread.bytes,
        x.topFrames.join(' ← '),
      ]),
    ),
  ]
  if (t.signal) out.push('', signalText(t.signal))
  out.push('', chalk.dim(`struct pthread read by ${t.nptl.how}`))
  for (const n of t.nptl.notes) out.push(chalk.yellow(`note: ${n}`))
  return out.join('\n')
}

/** A thread's frames, then (unless `returned` is false) the returned frames below its stack pointer. */
export function stackText(stack: ThreadStack, options: {returned: boolean} = {returned: true}): string {
  const s = printableData(stack)
  const out = [chalk.bold(`thread ${s.tid}: ${s.frames.length} frame(s); ${s.stop}`)]
  for (const f of s.frames) {
    out.push(`#${String(f.level).padEnd(3)} ${f.pc}  ${f.label}  ${chalk.dim(`CFA ${f.cfa}${frameHowText(f)}`)}`)
    for (const p of f.pointers) out.push(pointerText(p))
  }
  if (!options.returned) return out.join('\n')
  const withPointers = s.deadFrames.filter(d => d.pointers.length > 0)
  out.push('', chalk.bold(`Returned frames below the stack pointer: ${s.deadFrames.length} (${withPointers.length} holding heap pointers; not roots)`))
  for (const d of withPointers) {
    out.push(`  ${d.label}  ${chalk.dim(`${d.start}..${d.end}`)}`)
    for (const p of d.pointers) out.push(pointerText(p))
  }
  return out.join('\n')
}

/** A heap pointer in a frame: where it lies, the object it points into, at which offset. */
function pointerText(p: ThreadStack['frames'][number]['pointers'][number]): string {
  return `       ${chalk.dim(p.at)} → ${p.object.address}${p.object.offset ? offset(p.object.offset) : ''} ${objectKind(p.object)} ${byteSize(p.object.size)}`
}
