import path from 'node:path'
import chalk from 'chalk'
import {identifyAllocator} from '../allocators.js'
import {hex} from '../errors.js'
import {permissions} from '../core/address-space.js'
import {describeSymbolic, type Program} from '../program/program.js'
import {heading, table} from './table.js'
import {printableData} from '../util/printable.js'
import {signalText} from './wording.js'
import {ARCHITECTURES, type Architecture} from '../core/arch.js'

/** Everything `toma info` shows, as plain data (the --json form). */
export function infoData(program: Program) {
  const core = program.core
  return {
    core: program.coreFile,
    /** The decompressed core's size for a compressed core (`compressed` says its format and copy). */
    size: core.size,
    ...(program.compressed ? {compressed: {format: program.compressed.format, uncompressedPath: program.compressed.uncompressedPath}} : {}),
    process: core.process,
    /** The processor, and the names its registers go by in the columns below. */
    arch: {name: core.arch.name, pc: core.arch.pc, sp: core.arch.sp, threadPointer: threadPointerName(core.arch)},
    /** The allocator as far as telling it needs no walk of the heap. */
    allocator: identifyAllocator(program),
    signal: core.signal,
    threads: core.threads.map(t => {
      const stack = core.mappingAt(t.sp)
      const pcSymbol = describeSymbolic(program.symbolize(t.pc))
      const spMapping = stack ? {start: hex(stack.segment.start), end: hex(stack.segment.end), file: stack.file?.path ?? null} : null
      const threadPointer = t.threadPointer === null ? null : hex(t.threadPointer)
      return {
        tid: t.tid,
        signal: t.signal,
        pc: hex(t.pc),
        pcSymbol,
        sp: hex(t.sp),
        spMapping,
        /** Null when the core does not record it (an aarch64 core without NT_ARM_TLS). */
        threadPointer,
        // The keys this JSON had before aarch64 cores were read: kept on x86-64 so that scripts
        // reading them go on working.
        ...(core.arch.name === 'x86-64' ? {rip: hex(t.pc), ripSymbol: pcSymbol, rsp: hex(t.sp), rspMapping: spMapping, fsBase: threadPointer} : {}),
        registers: Object.fromEntries(core.arch.registerNames.map((n, i) => [n, '0x' + t.registers[i]!.toString(16)])),
      }
    }),
    /** Where the modules were found: the core's NT_FILE note, or the dynamic loader's link_map list (modules.ts). */
    modulesFrom: core.modulesFrom,
    modules: program.modules.map(m => ({
      path: m.module.path,
      base: hex(m.module.base),
      loadBias: hex(m.module.loadBias),
      buildId: m.module.buildId,
      file: m.file?.path ?? null,
      found: m.file !== null,
      verified: m.verified,
      how: m.how,
      debugFile: m.debug ? {path: m.debug.path, how: m.debug.how} : null,
    })),
    mappings: core.memory.segments.map(s => ({
      start: hex(s.start),
      end: hex(s.end),
      perms: permissions(s.flags),
      dumped: s.fileSize,
      present: s.presentSize,
      file: core.fileAt(s.start)?.path ?? null,
    })),
  }
}

import {grouped} from '../util/grouped.js'

/** The thread pointer's register as the architecture's manual names it. */
function threadPointerName(arch: Architecture): string {
  return 'register' in arch.threadPointer ? arch.threadPointer.register : 'tpidr_el0'
}

/** A thread pointer the core does not record: which note it lacks. */
function unknownThreadPointer(arch: Architecture): string {
  return 'note' in arch.threadPointer ? `unknown: no ${arch.threadPointer.noteName}` : 'unknown'
}

export function infoText(raw: ReturnType<typeof infoData>): string {
  const data = printableData(raw)
  const out: string[] = []
  const p = data.process
  out.push(`${chalk.bold('core')} ${data.core}  ${data.compressed ? `${data.compressed.format}, ${grouped(data.size)} bytes decompressed` : `${grouped(data.size)} bytes`}`)
  out.push(`${chalk.bold('process')} ${p.command ?? '?'} pid ${p.pid ?? '?'}  ${p.args ?? ''}`)
  out.push(`${chalk.bold('architecture')} ${data.arch.name}`)
  out.push(`${chalk.bold('allocator')} ${data.allocator}`)
  if (data.signal) out.push(signalText({...data.signal, faultAddress: data.signal.faultAddress === null ? null : hex(data.signal.faultAddress)}))
  out.push('', heading(`Threads (${data.threads.length})`))
  out.push(
    table(
      ['#tid', data.arch.pc, 'at', data.arch.sp, 'stack mapping', data.arch.threadPointer],
      data.threads.map(t => [
        t.tid, t.pc, t.pcSymbol, t.sp,
        t.spMapping ? `${t.spMapping.start}-${t.spMapping.end}${t.spMapping.file ? ' ' + t.spMapping.file : ''}` : chalk.red('not in core'),
        t.threadPointer ?? chalk.yellow(unknownThreadPointer(ARCHITECTURES.find(a => a.name === raw.arch.name)!)),
      ]),
    ),
  )
  out.push('', heading(`Modules (${data.modules.length}, from ${data.modulesFrom})`))
  out.push(
    table(
      ['base', 'module', 'build-id', 'file on disk'],
      data.modules.map(m => [
        m.base,
        path.basename(m.path),
        m.buildId ?? chalk.dim('none in core'),
        m.file
          ? `${m.file}${m.verified ? '' : chalk.yellow(' (build-id not verified)')}${m.debugFile ? ` + symbols from ${m.debugFile.path}` : ''}`
          : chalk.yellow(`not found: ${m.how}`),
      ]),
    ),
  )
  out.push('', heading(`Mappings (${data.mappings.length})`))
  out.push(
    table(
      ['start', 'end', 'perm', '#in core', 'file'],
      data.mappings.map(m => [m.start, m.end, m.perms, m.present, m.file ?? '']),
    ),
  )
  return out.join('\n')
}
