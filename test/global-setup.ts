import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/**
 * One temp root for the whole run: every test file puts its files under it (test/helpers/test-temp.ts),
 * the unpacked fixture cores and sysroots are cached in it, and TMPDIR points into it so that anything
 * a test or a child process writes to "the temp folder" lands there too. Removed at the end.
 */
export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toma-test-'))
  const tmp = path.join(root, 'tmp')
  fs.mkdirSync(tmp)
  process.env.TOMA_TEST_TMP = root
  process.env.TMPDIR = tmp
  return () => fs.rmSync(root, {recursive: true, force: true})
}
