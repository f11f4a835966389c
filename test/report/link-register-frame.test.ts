import {expect, it} from 'vitest'
import {unwindThread} from '../../src/program/unwind.js'
import {frameOut} from '../../src/queries/threads.js'
import {stackHtml} from '../../src/report/html/threads.js'
import {stackText} from '../../src/report/threads-text.js'
import {ARM64_BUSY_LOCK_KERNEL_FIXTURE, openArm64BusyFixture} from '../helpers/arm64-fixture.js'

// fixtures/arm64/busy-lock-kernel's worker 106 stopped in a PLT stub, which saved nothing: its
// caller (frame 1) is found by the link register x30, not by call-frame information (unwind.ts).
// The stack's text and HTML say so where they say "by frame pointer", and name the stub as gdb does.
it('aarch64: a frame found by the link register is marked so in the text and HTML stack views', async () => {
  const {core, program} = await openArm64BusyFixture(ARM64_BUSY_LOCK_KERNEL_FIXTURE)
  try {
    const unwound = unwindThread(program, core.threads.find(t => t.tid === 106)!)
    const stack = {tid: 106, stop: unwound.stop, frames: unwound.frames.map(f => ({...frameOut(program, f), pointers: []})), deadFrames: []}
    const text = stackText(stack, {returned: false}).split('\n')
    expect(text.filter(line => line.includes('by link register'))).toEqual([expect.stringMatching(/^#1 /)])
    expect(text[1]).toContain('tcmalloc::CentralFreeList::ReleaseToSpans(void*)@plt+0x0 (libtcmalloc_minimal.so.4.5.10)')
    const page = stackHtml(stack).toString()
    expect(page.match(/#\d+ [^\n]*by link register/g)?.map(line => line.split(' ')[0])).toEqual(['#1'])
  } finally {
    core.close()
  }
})
