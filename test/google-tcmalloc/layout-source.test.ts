import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {Core} from '../../src/core/core.js'
import {ElfFile} from '../../src/elf/elf-file.js'
import {analyzeGoogleHeap} from '../../src/google-tcmalloc/heap.js'
import {Program} from '../../src/program/program.js'
import {sparseCorePath} from '../helpers/fixture-core.js'
import {runToma} from '../helpers/run-toma.js'
import {testTemp} from '../helpers/test-temp.js'

// Where google/tcmalloc's layout comes from, on the release build of fce3f55 (2026-08), whose
// records differ from a debug build's: its own DWARF (a debug file by build-id), else the table's
// release layout; a table that knows only the debug layout is refused in one line that names the
// field; damaged DWARF is a warning, and the table reads the core as it would without it.
const DIR = fileURLToPath(new URL('../../fixtures/google-tcmalloc', import.meta.url))
const ID = 'gtc-2026-08-release-percpu'
const EXE = path.join(DIR, ID, 'gtcdemo')
const DEBUG_DIR = path.join(DIR, 'debug')
const present = fs.existsSync(path.join(DIR, ID, 'core.sparse.br'))

function heapOf(corePath: string, debugDirectories: string[]) {
  const program = Program.load(Core.open(corePath), {exe: EXE, debugDirectories})
  try {
    return analyzeGoogleHeap(program)
  } finally {
    program.core.close()
  }
}

describe.runIf(present)(`the layout of a release build (${ID})`, () => {
  it("comes from its debug file's DWARF, and without it from the table's release layout: the same heap", async () => {
    const core = await sparseCorePath(path.join(DIR, ID, 'core.sparse.br'))
    const withDwarf = heapOf(core, [DEBUG_DIR])
    const tableOnly = heapOf(core, [])
    expect(withDwarf.how).toMatch(/^layout from the DWARF of .*\/debug\/\.build-id\/[0-9a-f]{2}\/[0-9a-f]+\.debug, the same as the table's family 2026-08 \(release build\) /)
    expect(tableOnly.how).toMatch(/^family 2026-08 \(release build\) with 8 KiB pages: /)
    expect(tableOnly.layout.build).toBe('release')
    expect(withDwarf.warnings.list).toEqual([])
    expect(tableOnly.warnings.list).toEqual([])
    expect(Array.from(tableOnly.state)).toEqual(Array.from(withDwarf.state))
  })

  it('is refused in one line under the debug layout alone, naming the family that came closest and the field that failed', async () => {
    const work = testTemp('gtc-closest')
    const core = await sparseCorePath(path.join(DIR, ID, 'core.sparse.br'))
    const r = await runToma(['analyze', core, '--exe', EXE, '--tcmalloc-version', '2026-08-debug', '--index', path.join(work, 'x.idx')], {cwd: work})
    expect(r.status).not.toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    // gdb's ptype /o: first_page_ is a 35-bit field at byte 24 of the release build's Span, at 32 in a debug build's.
    expect(r.stderr).toMatch(
      /names no span under any known layout \(families 2026-08 \(debug build\) .*Closest: family 2026-08 \(debug build\) with 8 KiB pages, whose page map walks, but its span records keep their first page in a 35-bit field at byte 24 \(\d+ of \d+ records\), where the family puts Span::first_page_ in a 35-bit field at byte 32; give toma the executable's DWARF/,
    )
    expect(fs.existsSync(path.join(work, 'x.idx'))).toBe(false)
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)

  it('is read from a --debug-file-directory given relative to the current folder, and analyze says so', async () => {
    const work = testTemp('gtc-debugdir')
    const core = await sparseCorePath(path.join(DIR, ID, 'core.sparse.br'))
    const r = await runToma(['analyze', core, '--exe', EXE, '--debug-file-directory', 'debug', '--index', path.join(work, 'x.idx'), '--json'], {cwd: DIR})
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const summary = JSON.parse(r.stdout) as {allocator: {version: string; layoutGroup: string; versionHow: string}}
    expect(summary.allocator).toMatchObject({version: '2026-08', layoutGroup: '2026-08 (release build)'})
    expect(summary.allocator.versionHow).toMatch(/^layout from the DWARF of .*google-tcmalloc\/debug\/\.build-id\//)
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)

  it('is read from the table, with a warning naming the file, when the debug file is damaged', async () => {
    const core = await sparseCorePath(path.join(DIR, ID, 'core.sparse.br'))
    const buildId = ElfFile.load(EXE).buildId!
    const good = path.join(DEBUG_DIR, '.build-id', buildId.slice(0, 2), `${buildId.slice(2)}.debug`)
    const work = testTemp('gtc-bad-debug')
    const bad = path.join(work, '.build-id', buildId.slice(0, 2), `${buildId.slice(2)}.debug`)
    fs.mkdirSync(path.dirname(bad), {recursive: true})
    const bytes = fs.readFileSync(good)
    // The compressed .debug_info's header says zlib (1): any other type cannot be inflated.
    const info = ElfFile.load(good).section('.debug_info')!
    bytes.writeUInt32LE(0x99, info.offset)
    fs.writeFileSync(bad, bytes)
    const heap = heapOf(core, [work])
    expect(heap.warnings.list.map(w => w.message)).toEqual([expect.stringMatching(/^the DWARF of .*\.debug is damaged \(.*\): the table's families are tried$/)])
    expect(heap.how).toMatch(/^family 2026-08 \(release build\) with 8 KiB pages: /)
    expect(Array.from(heap.state)).toEqual(Array.from(heapOf(core, [DEBUG_DIR]).state))
    fs.rmSync(work, {recursive: true, force: true})
  }, 120_000)
})
