import path from 'node:path'
import chalk from 'chalk'
import {identifyAllocator} from '../allocators.js'
import {hex} from '../errors.js'
import {permissions} from '../core/address-space.js'
import {describeSymbolic, type Program} from '../program/program.js'
import {heading, table} from './table.js'
import {printableData} from '../util/printable.js'
import {signalText} from './wording.js'

/** Everything `toma info` shows, as plain data (the --json form). */
export function infoData(program: Program) {
  const core = program.core
  return {
    core: program.coreFile,
    /** The decompressed core's size for a compressed core (`compressed` says its format and copy). */
    size: core.size,
    ...(program.compressed ? {compressed: {format: program.compressed.format, uncompressedPath: program.compressed.uncompressedPath}} : {}),
    process: core.process,
    /** The allocator as far as telling it needs no walk of the heap. */
    allocator: identifyAllocator(program),
    signal: core.signal,
    threads: core.threads.map(t => {
      const stack = core.mappingAt(t.rsp)
      return {
        tid: t.tid,
        signal: t.signal,
        rip: hex(t.rip),
        ripSymbol: describeSymbolic(program.symbolize(t.rip)),
        rsp: hex(t.rsp),
        rspMapping: stack ? {start: hex(stack.segment.start), end: hex(stack.segment.end), file: stack.file?.path ?? null} : null,
        fsBase: hex(t.fsBase),
        registers: Object.fromEntries(registerEntries(t.registers)),
      }
    }),
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

import {REGISTER_NAMES} from '../core/thread-registers.js'
import {grouped} from '../util/grouped.js'
function registerEntries(regs: BigUint64Array): Array<[string, string]> {
  return REGISTER_NAMES.map((n, i) => [n, '0x' + regs[i]!.toString(16)])
}

export function infoText(raw: ReturnType<typeof infoData>): string {
  const data = printableData(raw)
  const out: string[] = []
  const p = data.process
  out.push(`${chalk.bold('core')} ${data.core}  ${data.compressed ? `${data.compressed.format}, ${grouped(data.size)} bytes decompressed` : `${grouped(data.size)} bytes`}`)
  out.push(`${chalk.bold('process')} ${p.command ?? '?'} pid ${p.pid ?? '?'}  ${p.args ?? ''}`)
  out.push(`${chalk.bold('allocator')} ${data.allocator}`)
  if (data.signal) out.push(signalText({...data.signal, faultAddress: data.signal.faultAddress === null ? null : hex(data.signal.faultAddress)}))
  out.push('', heading(`Threads (${data.threads.length})`))
  out.push(
    table(
      ['#tid', 'rip', 'at', 'rsp', 'stack mapping'],
      data.threads.map(t => [t.tid, t.rip, t.ripSymbol, t.rsp, t.rspMapping ? `${t.rspMapping.start}-${t.rspMapping.end}${t.rspMapping.file ? ' ' + t.rspMapping.file : ''}` : chalk.red('not in core')]),
    ),
  )
  out.push('', heading(`Modules (${data.modules.length})`))
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
