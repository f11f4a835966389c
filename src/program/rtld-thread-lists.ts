import path from 'node:path'
import type {AddressSpace} from '../core/address-space.js'
import type {Program} from './program.js'
import {threadDb} from './thread-db.js'

/** More entries than this is not a list glibc keeps (its stack cache holds 40 MiB of stacks). */
export const MAX_LISTED_THREADS = 4096

/**
 * The thread lists of glibc 2.34+ in ld.so's `_rtld_global` (ldsodefs.h): `_dl_stack_used` (threads
 * on stacks glibc allocated), `_dl_stack_user` (threads on stacks it did not: the main thread), and
 * `_dl_stack_cache`, the list_t right after `_dl_stack_user` (stacks of exited threads kept for
 * reuse); each a list_t of `struct pthread` linked through its `list` field. Located by libc's
 * libthread_db descriptors; `why` says what is missing when they cannot be.
 */
export type RtldThreadLists =
  | {stackUser: number; stackUsed: number | null; stackCache: number; listOffset: number; tidOffset: number | null; why: null}
  | {why: string}

export function rtldThreadLists(program: Program): RtldThreadLists {
  const db = threadDb(program)
  if (!db) return {why: 'libc file not found'}
  const user = db.field('rtld_global__dl_stack_user')
  const used = db.field('rtld_global__dl_stack_used')
  const list = db.field('pthread_list')
  if (!user || !list) return {why: `${path.basename(db.libc.module.path)} has no _thread_db_rtld_global__dl_stack_user (glibc before 2.34)`}
  const rtld = program.symbolAddress('_rtld_global')
  if (!rtld) return {why: 'ld.so file not found (no _rtld_global)'}
  return {
    stackUser: rtld.address + user[2],
    stackUsed: used ? rtld.address + used[2] : null,
    stackCache: rtld.address + user[2] + 16,
    listOffset: list[2],
    tidOffset: db.field('pthread_tid')?.[2] ?? null,
    why: null,
  }
}

/** The struct pthread addresses on one list_t (bounded; every node must be in the core), and where it broke. */
export function walkPthreadList(memory: AddressSpace, head: number, listOffset: number): {tcbs: number[]; broken: string | null} {
  const tcbs: number[] = []
  let p = memory.readU64(head)
  while (p !== head) {
    if (p === undefined) return {tcbs, broken: `list at 0x${head.toString(16)} is not in the core`}
    if (p === 0 || tcbs.length >= MAX_LISTED_THREADS || memory.readU64(p + 8) === undefined) return {tcbs, broken: `list at 0x${head.toString(16)} is broken after ${tcbs.length} entries`}
    tcbs.push(p - listOffset)
    p = memory.readU64(p)
  }
  return {tcbs, broken: null}
}
