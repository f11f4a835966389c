import type {ThreadList, ThreadStack} from '../../queries/threads.js'
import {bytes} from '../table.js'
import {frameHowText, objectKind, offset, signalText} from '../wording.js'
import {dataTable} from './data-table.js'
import {html, num, type Html} from './html.js'
import type {ReportSection} from './section.js'

/** Frames and heap pointers listed per thread; the rest are counted (`toma stack TID` gives them all). */
const FRAMES_PER_THREAD = 100
const POINTERS_PER_THREAD = 100

type StackFrame = ThreadStack['frames'][number]

function frameHtml(f: StackFrame, pointers: number): Html {
  const listed = f.pointers.slice(0, pointers)
  return html`<div>#${f.level} <code>${f.pc}</code> ${f.label} <span class="dim">CFA ${f.cfa}${frameHowText(f)}</span>
${listed.map(p => html`<div class="dim">&nbsp;&nbsp;&nbsp;&nbsp;${p.at} → ${p.object.address}${p.object.offset ? offset(p.object.offset) : ''} ${objectKind(p.object)} ${num(p.object.size)} B</div>`)}
${f.pointers.length > listed.length ? html`<div class="more">&nbsp;&nbsp;&nbsp;&nbsp;… ${num(f.pointers.length - listed.length)} more heap pointers</div>` : ''}</div>`
}

/** A thread's frames with the heap pointers in each, innermost first, within the per-thread budget. */
export function stackHtml(s: ThreadStack): Html {
  let budget = POINTERS_PER_THREAD
  const frames = s.frames.slice(0, FRAMES_PER_THREAD).map(f => {
    const shown = frameHtml(f, budget)
    budget = Math.max(0, budget - f.pointers.length)
    return shown
  })
  const hidden = s.frames.length - frames.length
  return html`<div class="mono">${frames}${hidden > 0 ? html`<div class="more">… ${num(hidden)} more frames</div>` : ''}<div class="dim">${s.stop}; ${num(s.deadFrames.filter(d => d.pointers.length > 0).length)} returned frames below the stack pointer hold heap pointers (not roots; <code>toma stack ${String(s.tid)}</code>)</div></div>`
}

/** Each thread: start routine, stack, thread cache, what only it holds, and its frames. */
export function threadsSection(t: ThreadList, stacks: Array<ThreadStack | null>): ReportSection {
  const body = html`${dataTable({
    id: 'threads',
    columns: [{title: 'tid', numeric: true}, {title: 'start routine'}, {title: 'stack used', numeric: true}, {title: 'stack size', numeric: true}, {title: 'thread cache', numeric: true}, {title: 'held only by it', numeric: true}, {title: 'objects', numeric: true}, {title: 'top frames'}],
    rows: t.threads.map(x => [
      {value: x.tid, text: String(x.tid)},
      html`${x.startRoutine ?? html`<span class="dim">(main or unknown)</span>`}${x.crashed ? html` <span class="bad">← signal ${x.signal}</span>` : ''}`,
      {value: x.stack.used, text: bytes(x.stack.used)},
      x.stack.size === null ? {value: -1, text: '?'} : {value: x.stack.size, text: bytes(x.stack.size)},
      x.threadCacheBytes,
      x.onlyThisThread.bytes,
      x.onlyThisThread.objects,
      x.topFrames.join(' ← '),
    ]),
  })}
${t.signal ? html`<p>${signalText(t.signal)}</p>` : ''}
<p class="dim">struct pthread read by ${t.nptl.how}. "Held only by it": bytes that would become unreachable without the thread's registers, stack and TLS.</p>
${t.nptl.notes.map(n => html`<p class="warn">note: ${n}</p>`)}
<h3>Stacks</h3>
${t.threads.slice(0, stacks.length).map((x, i) => {
  const s = stacks[i]
  return s ? html`<details><summary>thread ${String(x.tid)} ${x.startRoutine ?? '(main or unknown)'}: ${num(s.frames.length)} frames; holds ${bytes(x.onlyThisThread.bytes)} alone</summary>${stackHtml(s)}</details>` : ''
})}
${t.threads.length > stacks.length ? html`<p class="more">… ${num(t.threads.length - stacks.length)} more threads' stacks not shown (<code>toma stack TID</code>)</p>` : ''}`
  return {id: 'threads', title: 'Threads', body}
}
