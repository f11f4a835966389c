import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/**
 * The one temp root of this test run. vitest's globalSetup (test/global-setup.ts) creates it, hands
 * it to the workers in TOMA_TEST_TMP and removes it when the run ends, so nothing a test writes
 * outlives the run. Outside vitest (a test file run by hand) it falls back to a folder of this
 * process, removed on exit.
 */
export function testTempRoot(): string {
  const root = process.env.TOMA_TEST_TMP
  if (root) {
    fs.mkdirSync(root, {recursive: true})
    return root
  }
  return ownRoot()
}

let own: string | undefined
function ownRoot(): string {
  if (own === undefined) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toma-test-'))
    own = dir
    process.on('exit', () => fs.rmSync(dir, {recursive: true, force: true}))
  }
  return own
}

/** A new empty folder under the run's temp root (the replacement for mkdtemp(os.tmpdir()/prefix)). */
export function testTemp(prefix: string): string {
  return fs.mkdtempSync(path.join(testTempRoot(), prefix))
}

/** A file name under the run's temp root (not created). */
export function testTempFile(name: string): string {
  return path.join(testTempRoot(), name)
}
