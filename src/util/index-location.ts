import fs from 'node:fs'
import {createRequire} from 'node:module'
import os from 'node:os'
import path from 'node:path'
import {TomaError} from '../errors.js'
import {writeFileSafely} from './temporary-file.js'

export const INDEX_SUFFIX = '.toma-index'
const LAST = path.join('.toma', 'last.json')

function writable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** Beside the core when its folder is writable, else in the user's cache folder. */
export function defaultIndexPath(corePath: string): string {
  const abs = path.resolve(corePath)
  if (writable(path.dirname(abs))) return abs + INDEX_SUFFIX
  // node:crypto only here: loading it costs every query about 4 ms of its start-up.
  const crypto: typeof import('node:crypto') = createRequire(import.meta.url)('node:crypto')
  const key = crypto.createHash('sha1').update(abs).digest('hex').slice(0, 16)
  let dir: string
  try {
    dir = cacheFolder()
  } catch (e) {
    throw new TomaError(`no place to write the index of ${corePath}: its folder is not writable, and ${(e as Error).message}; give --index FILE in a writable folder`)
  }
  return path.join(dir, `${path.basename(abs)}-${key}${INDEX_SUFFIX}`)
}

/** The user's cache folder for toma (created): $XDG_CACHE_HOME/toma, else ~/.cache/toma. */
export function cacheFolder(...sub: string[]): string {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache')
  const dir = path.join(cache, 'toma', ...sub)
  try {
    fs.mkdirSync(dir, {recursive: true})
  } catch (e) {
    throw new TomaError(`the cache folder ${dir} cannot be created (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
  }
  return dir
}

/**
 * Where files made from `file` are kept (a compressed core's decompressed copy): ./.toma/<sub>/
 * beside it when its folder is writable, like its index, and ./.toma is this user's own folder
 * (not a symlink or another user's: root never writes where someone else points it), else the
 * user's cache folder. Created.
 */
export function cacheFolderBeside(file: string, sub: string): string {
  const dir = path.dirname(path.resolve(file))
  const beside = path.join(dir, '.toma', sub)
  if (writable(dir) && ownFolder(path.join(dir, '.toma')) && ownFolder(beside)) return beside
  try {
    return cacheFolder(sub)
  } catch (e) {
    throw new TomaError(`no place to keep the decompressed copy of ${file}: its folder is not writable, and ${(e as Error).message}; decompress it into a writable folder yourself`)
  }
}

/**
 * Whether `dir` is a folder of this user's that is no symlink, made here when missing: a folder
 * toma writes into inside a folder others may write to.
 */
export function ownFolder(dir: string): boolean {
  try {
    fs.mkdirSync(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return false
  }
  const stat = fs.lstatSync(dir, {throwIfNoEntry: false})
  return !!stat && stat.isDirectory() && (!process.geteuid || stat.uid === process.geteuid())
}


/**
 * Records the latest analysis made from this folder, for commands run without a core argument.
 * With create false, only an existing ./.toma/ is updated (an analysis told where its index goes
 * leaves no folder behind).
 */
export function rememberLast(core: string, index: string, {create = true, cwd = process.cwd()} = {}): void {
  try {
    if (!create && !fs.existsSync(path.join(cwd, '.toma'))) return
    if (!ownFolder(path.join(cwd, '.toma'))) return
    writeFileSafely(path.join(cwd, LAST), JSON.stringify({core: path.resolve(core), index: path.resolve(index)}))
  } catch {
    // A read-only working folder only loses the convenience of omitting the core next time.
  }
}

export function lastAnalysis(cwd = process.cwd()): {core: string; index: string} {
  try {
    const last = JSON.parse(fs.readFileSync(path.join(cwd, LAST), 'utf8')) as {core: string; index: string}
    if (typeof last.core === 'string' && typeof last.index === 'string') return last
  } catch {
    // fall through
  }
  throw new TomaError('no core given and no analysis made in this folder: run `toma analyze CORE` first')
}
