import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {Core} from '../../src/core/core.js'
import {Program} from '../../src/program/program.js'
import {brotliCorePath, brotliTreePath, type Truth} from './fixture-core.js'

/** The aarch64 fixture (fixtures/generate-arm64.sh): a QEMU-user core of heapdemo on Debian 12's arm64 gperftools 2.10. */
export const ARM64_FIXTURE = fileURLToPath(new URL('../../fixtures/arm64/heapdemo-2.10', import.meta.url))

/** gdb-multiarch's view of the fixture core, recorded when it was made (gdb.txt). */
export interface GdbView {
  threads: Array<{tid: number; pthread: string; pc: string; sp: string}>
  /** `info sharedlibrary`: each library's .text range and path. */
  libraries: Array<{from: string; to: string; path: string}>
}

export function arm64GdbView(dir = ARM64_FIXTURE): GdbView {
  const text = fs.readFileSync(path.join(dir, 'gdb.txt'), 'utf8')
  const threads = [...text.matchAll(/^Thread \d+ \(Thread (0x[0-9a-f]+) \(LWP (\d+)\)\):\npc +(0x[0-9a-f]+) .*\nsp +(0x[0-9a-f]+) /gm)].map(m => ({
    tid: Number(m[2]),
    pthread: m[1]!,
    pc: m[3]!,
    sp: m[4]!,
  }))
  const libraries = [...text.matchAll(/^(0x[0-9a-f]+) +(0x[0-9a-f]+) +Yes[^/]*(\/\S+)$/gm)].map(m => ({from: m[1]!, to: m[2]!, path: m[3]!}))
  return {threads, libraries}
}

/** The same program built as a PIE (its libraries are ARM64_FIXTURE's sysroot). */
export const ARM64_PIE_FIXTURE = `${ARM64_FIXTURE}-pie`

/**
 * The -no-pie program run with 64 KiB pages (QEMU_PAGESIZE=65536, as under a 64 KiB-page arm64
 * kernel): a QEMU-user core with gdb's view; its libraries are ARM64_FIXTURE's sysroot.
 */
export const ARM64_64K_FIXTURE = `${ARM64_FIXTURE}-64k`

/**
 * heapdemo linked with gperftools 2.10 built for aarch64 with 64 KiB TCMalloc pages
 * (build-gperftools.sh 2.10 64, GPERFTOOLS_HOST=aarch64-linux-gnu), run with 64 KiB kernel pages;
 * its libtcmalloc is the fixture's own (libtcmalloc.so.4.br, given as --tcmalloc).
 */
export const ARM64_P64_FIXTURE = `${ARM64_FIXTURE}-p64-64k`

/**
 * The -no-pie program with TCMalloc's heap sampling on (TCMALLOC_SAMPLE_PARAMETER=512): its truth
 * holds GetHeapSample's text (heapSample); its libraries are ARM64_FIXTURE's sysroot.
 */
export const ARM64_SAMPLED_FIXTURE = `${ARM64_FIXTURE}-sampled`

/** The kernel-written cores of heapdemo in an arm64 VM (fixtures/generate-arm64-kernel.sh): core.br the kernel's, gcore.br gdb's. */
export const ARM64_KERNEL_FIXTURE = `${ARM64_FIXTURE}-kernel`

/** The same program built -mbranch-protection=standard, the kernel's core in the VM: its saved return addresses are signed. */
export const ARM64_PAC_KERNEL_FIXTURE = `${ARM64_FIXTURE}-pac-kernel`

/**
 * A fixture's core (`core.br`, or the one named), the sysroot of arm64 libraries (the fixture's own,
 * else ARM64_FIXTURE's) and the program opened as a user would: --exe and --sysroot, and --tcmalloc
 * where the fixture holds a libtcmalloc of its own build.
 */
export async function openArm64Fixture(dir = ARM64_FIXTURE, coreName = 'core.br') {
  const corePath = await brotliCorePath(path.join(dir, coreName))
  const sysroot = await brotliTreePath(path.join(fs.existsSync(path.join(dir, 'sysroot')) ? dir : ARM64_FIXTURE, 'sysroot'))
  const exe = path.join(dir, 'heapdemo')
  const ownTcmalloc = path.join(dir, 'libtcmalloc.so.4.br')
  const tcmalloc = fs.existsSync(ownTcmalloc) ? await brotliCorePath(ownTcmalloc) : undefined
  const core = Core.open(corePath)
  const program = Program.load(core, {exe, sysroot, tcmalloc})
  const truth = JSON.parse(fs.readFileSync(path.join(dir, 'truth.json'), 'utf8')) as Truth
  return {corePath, sysroot, exe, core, program, truth}
}

/** The busy core of busydemo in the arm64 VM (fixtures/generate-arm64-kernel.sh busy): gdb's gcore while its workers ran. */
export const ARM64_BUSY_KERNEL_FIXTURE = fileURLToPath(new URL('../../fixtures/arm64/busy-kernel', import.meta.url))

/** The same program with 8 workers and small thread caches (generate-arm64-kernel.sh busy-lock): a central free list's lock held. */
export const ARM64_BUSY_LOCK_KERNEL_FIXTURE = fileURLToPath(new URL('../../fixtures/arm64/busy-lock-kernel', import.meta.url))

/** The kernel's crash core, whose sysroot stores libtcmalloc_minimal (the busy cores' libraries are its and ARM64_KERNEL_FIXTURE's). */
const ARM64_CRASH_KERNEL_FIXTURE = fileURLToPath(new URL('../../fixtures/arm64/crash-uaf-crash-kernel', import.meta.url))

/**
 * A busy fixture's core and its program opened as a user would (--exe busydemo, --sysroot, and
 * --tcmalloc for libtcmalloc_minimal, which another fixture's sysroot stores: record.json's
 * sysrootShared), with its truth (fixtures/tools/busy-truth.mjs's, gdbStacks among it).
 */
export async function openArm64BusyFixture<T = Truth>(dir = ARM64_BUSY_KERNEL_FIXTURE) {
  const sysroot = await brotliTreePath(path.join(ARM64_KERNEL_FIXTURE, 'sysroot'))
  const tcmalloc = path.join(await brotliTreePath(path.join(ARM64_CRASH_KERNEL_FIXTURE, 'sysroot')), 'usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4.5.10')
  const core = Core.open(await brotliCorePath(path.join(dir, 'core.br')))
  const program = Program.load(core, {exe: path.join(dir, 'busydemo'), sysroot, tcmalloc})
  const truth = JSON.parse(fs.readFileSync(path.join(dir, 'truth.json'), 'utf8')) as T
  return {core, program, truth}
}
