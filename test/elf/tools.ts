// Measuring expectations with binutils, so tests compare against readelf/nm rather than
// hand-written numbers.
import {execFileSync} from 'node:child_process'
import {existsSync} from 'node:fs'

export const LIBC = '/lib/x86_64-linux-gnu/libc.so.6'
export const LIBSTDCXX = '/usr/lib/x86_64-linux-gnu/libstdc++.so.6'
export const LS = '/bin/ls'
export const LIBTCMALLOC = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4'

export function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, {encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: {...process.env, LC_ALL: 'C'}})
}

export function have(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}

export const haveBinutils = have('readelf') && have('nm')
export const exists = (p: string) => existsSync(p)

/** `readelf -n`'s build-id, or null. */
export function readelfBuildId(file: string): string | null {
  const m = /Build ID: ([0-9a-f]+)/.exec(run('readelf', ['-n', file]))
  return m ? m[1] : null
}

/** Defined dynamic symbols from `nm -D --defined-only`: name (version stripped) -> values. */
export function nmDynamic(file: string): Map<string, number[]> {
  return parseNm(run('nm', ['-D', '--defined-only', file]))
}

/** Symbols from `nm` (the .symtab). */
export function nmSymtab(file: string): Map<string, number[]> {
  return parseNm(run('nm', ['--defined-only', file]))
}

function parseNm(text: string): Map<string, number[]> {
  const out = new Map<string, number[]>()
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) \S (\S+)$/.exec(line)
    if (!m) continue
    const name = m[2].replace(/@.*$/, '')
    const list = out.get(name) ?? []
    list.push(parseInt(m[1], 16))
    out.set(name, list)
  }
  return out
}

/** True when `readelf -S` lists a .symtab. */
export function readelfHasSymtab(file: string): boolean {
  return /\s\.symtab\s/.test(run('readelf', ['-SW', file]))
}

/** r_offset of each relocation of a type against a symbol, from `readelf -rW`. */
export function readelfRelocOffsets(file: string, type: string, symbol: string): number[] {
  const out: number[] = []
  for (const line of run('readelf', ['-rW', file]).split('\n')) {
    const f = line.trim().split(/\s+/)
    if (f[2] === type && f[4] === symbol) out.push(parseInt(f[0], 16))
  }
  return out
}

/** PT_LOAD rows of `readelf -lW`. */
export function readelfLoads(file: string): {offset: number; vaddr: number; filesz: number; memsz: number}[] {
  const out = []
  for (const line of run('readelf', ['-lW', file]).split('\n')) {
    const f = line.trim().split(/\s+/)
    if (f[0] !== 'LOAD') continue
    out.push({offset: parseInt(f[1], 16), vaddr: parseInt(f[2], 16), filesz: parseInt(f[4], 16), memsz: parseInt(f[5], 16)})
  }
  return out
}

/** `readelf -SW` rows: name -> {addr, offset, size}. */
export function readelfSections(file: string): Map<string, {addr: number; offset: number; size: number; type: string}> {
  const out = new Map<string, {addr: number; offset: number; size: number; type: string}>()
  for (const line of run('readelf', ['-SW', file]).split('\n')) {
    const m = /^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)/.exec(line)
    if (m) out.set(m[1], {type: m[2], addr: parseInt(m[3], 16), offset: parseInt(m[4], 16), size: parseInt(m[5], 16)})
  }
  return out
}

/** `readelf -d`'s SONAME, or null. */
export function readelfSoname(file: string): string | null {
  const m = /\(SONAME\)\s+Library soname: \[([^\]]+)\]/.exec(run('readelf', ['-d', file]))
  return m ? m[1] : null
}

/** A symbol with its size, from `nm -S` (the .symtab) or `nm -S -D` (.dynsym). */
export interface NmSymbol { name: string; value: number; size: number }

/** Defined symbols that have a size, as binutils lists them (names mangled, version suffix dropped). */
export function nmSized(file: string, dynamic: boolean): NmSymbol[] {
  const out: NmSymbol[] = []
  for (const line of run('nm', ['-S', '--defined-only', ...(dynamic ? ['-D'] : []), file]).split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) ([TtWwDdBbRrVvi]) (\S+)$/.exec(line)
    if (m) out.push({name: m[4].replace(/@.*$/, ''), value: parseInt(m[1], 16), size: parseInt(m[2], 16)})
  }
  return out
}

/** The innermost of `symbols` whose [value, value+size) holds vaddr, or undefined. */
export function innermostHolding(symbols: NmSymbol[], vaddr: number): NmSymbol | undefined {
  let best: NmSymbol | undefined
  for (const s of symbols) {
    if (s.size > 0 && vaddr >= s.value && vaddr < s.value + s.size && (!best || s.size < best.size)) best = s
  }
  return best
}
