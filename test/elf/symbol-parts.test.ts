import fs from 'node:fs'
import path from 'node:path'
import {expect, test} from 'vitest'
import {ElfFile} from '../../src/elf/elf-file.js'
import {readSymbolParts} from '../../src/elf/symbol-parts.js'
import {FIXTURES} from '../helpers/fixture-core.js'
import {testTemp} from '../helpers/test-temp.js'
import {LIBC} from './tools.js'

// A debug file is read by range: headers, symbol and string tables, notes. The symbols, build-id
// and debuglink read from that small image must be those of the whole file.

function same(file: string): {whole: ElfFile; parts: ElfFile; bytes: number} {
  const whole = ElfFile.load(file)
  const bytes = readSymbolParts(file).length
  const parts = ElfFile.loadSymbolParts(file)
  expect(parts.buildId).toBe(whole.buildId)
  expect(parts.debugLink).toEqual(whole.debugLink)
  expect(parts.sections.map(s => [s.name, s.addr, s.size])).toEqual(whole.sections.map(s => [s.name, s.addr, s.size]))
  const all = whole.symbolsByPrefix('')
  expect(all.length).toBeGreaterThan(50)
  expect(parts.symbolsByPrefix('')).toEqual(all)
  for (const s of all.filter(x => x.size > 0).slice(0, 500)) expect(parts.symbolAt(s.value), s.name).toEqual(whole.symbolAt(s.value))
  return {whole, parts, bytes}
}

test('the fixture executable: same symbols, build-id and sections from its symbol parts alone', () => {
  const {bytes} = same(path.join(FIXTURES, 'v2.10-shared', 'heapdemo'))
  expect(bytes).toBeLessThan(fs.statSync(path.join(FIXTURES, 'v2.10-shared', 'heapdemo')).size)
})

test('the machine\'s libc debug file, when installed: same symbols from a fraction of its bytes', () => {
  const id = fs.existsSync(LIBC) ? ElfFile.load(LIBC).buildId : null
  const debug = id ? `/usr/lib/debug/.build-id/${id.slice(0, 2)}/${id.slice(2)}.debug` : ''
  if (!id || !fs.existsSync(debug)) {
    console.log('skipped: no debug file of this machine\'s libc under /usr/lib/debug (Debian: libc6-dbg)')
    return
  }
  const {bytes} = same(debug)
  expect(bytes).toBeLessThan(fs.statSync(debug).size / 2)
})

test('a file that is not ELF, or cut inside its section headers, is one clear error', () => {
  expect(() => readSymbolParts(path.join(FIXTURES, 'index.json'))).toThrow(/is not an ELF64 little-endian file/)
  const dir = testTemp('parts-')
  try {
    const whole = fs.readFileSync(path.join(FIXTURES, 'v2.10-shared', 'heapdemo'))
    const cut = path.join(dir, 'cut.debug')
    fs.writeFileSync(cut, whole.subarray(0, whole.length - 100)) // section headers are at the end
    expect(() => readSymbolParts(cut)).toThrow(/cut\.debug is truncated: \d+ bytes at \d+ lie past its end/)
  } finally {
    fs.rmSync(dir, {recursive: true, force: true})
  }
})
