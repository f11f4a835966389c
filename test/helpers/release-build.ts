import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {analyzeCore} from '../../src/pipeline/analyze-core.js'
import {brotliCorePath} from './fixture-core.js'

const TCMALLOC = fileURLToPath(new URL('../../fixtures/demo/libtcmalloc.so.4', import.meta.url))

/**
 * Analyzes a naming fixture made by generate.sh's release_build (`dir`: core.br, the stripped
 * `name` and `name.debug`) into work/core.toma-index, and returns that path. The release build is
 * the stripped file copied alone into `work` (its debuglink finds no debug file); the -g build is
 * the same file with its debug file beside it (one compile, one build-id). `hostDebug` false: an
 * empty debug folder instead of the host's (libc6-dbg's DWARF would depend on the machine).
 */
export async function analyzeReleaseBuild(dir: string, name: string, work: string, withDebugFile: boolean, hostDebug = true): Promise<string> {
  const exe = path.join(work, name)
  fs.copyFileSync(path.join(dir, name), exe)
  if (withDebugFile) fs.copyFileSync(path.join(dir, `${name}.debug`), path.join(work, `${name}.debug`))
  const noDebug = path.join(work, 'no-debug')
  if (!hostDebug) fs.mkdirSync(noDebug)
  const indexPath = path.join(work, 'core.toma-index')
  analyzeCore(await brotliCorePath(path.join(dir, 'core.br')), {exe, tcmalloc: TCMALLOC, ...(hostDebug ? {} : {'debug-file-directory': noDebug})}, undefined, indexPath)
  return indexPath
}
