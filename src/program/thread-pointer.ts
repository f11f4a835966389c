import type {Core} from '../core/core.js'
import type {Thread} from '../core/thread-registers.js'

/**
 * Where glibc's `struct pthread` of a thread is (its pthread_t), from the thread pointer. On x86-64
 * (TLS variant II) the TCB at fs_base is struct pthread itself. On aarch64 (variant I) struct pthread
 * sits just below the thread pointer (THREAD_SELF = tp − sizeof(struct pthread)): not read yet, as
 * no aarch64 core at hand records the thread pointer to test it on (QEMU's have no NT_ARM_TLS), so
 * null there rather than a guess; `pthreadUnknownWhy` says so once.
 */
export function pthreadAddress(core: Core, thread: Thread): number | null {
  return core.arch.name === 'x86-64' ? thread.threadPointer : null
}

/** Why pthreadAddress answers null for a core's threads, or null when it answers. */
export function pthreadUnknownWhy(core: Core): string | null {
  if (core.arch.name === 'x86-64') return null
  if (core.threads.every(t => t.threadPointer === null)) return `${core.arch.name} core without NT_ARM_TLS (as QEMU writes them): the threads' thread pointers, TLS and struct pthread are unknown`
  return `${core.arch.name}: struct pthread below the thread pointer is not read yet: the threads' TLS and struct pthread are not used`
}
