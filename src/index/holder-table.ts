import {DamagedIndexError} from './index-file.js'
import {isNum, isObj} from './index-meta.js'

/**
 * What holds a group of untyped objects: the nearest typed object above them in the dominator
 * tree (`type`), or, when only untyped objects lie between them and the roots, the root that holds
 * the topmost one: a global symbol, a thread's frame, an anonymous mapping (with the globals and
 * frames that point into it: its anchors), TLS, a register; `thread` when one thread alone reaches
 * them through no single root; `leaked` when no root reaches them and no typed object is above them.
 * An object the roots reach on several paths (the dominator tree's top) is held by whatever holds
 * its start address (a root, or a referrer and so that referrer's holder): owners keep the start,
 * to free it; pointers into the middle (an index's, a list's) are not the owner's.
 */
export interface Holder {
  kind: 'type' | 'global' | 'frame' | 'mapping' | 'tls' | 'register' | 'cached-stack' | 'thread' | 'leaked'
  /** The type, the symbol (demangled), the frame (`thread 12 #3 worker_main`), the region's label. */
  name: string
  /** A global's module file name. */
  module?: string
  /** A mapping's anchors: the globals, stack slots and TLS words that point into it. */
  anchors?: string[]
}

const HOLDER_KINDS: ReadonlySet<string> = new Set<Holder['kind']>(['type', 'global', 'frame', 'mapping', 'tls', 'register', 'cached-stack', 'thread', 'leaked'])

/** Untyped objects of one size under one holder. */
export interface HolderGroup {
  size: number
  holder: Holder
  objects: number
  /** Their own bytes (objects × size). */
  bytes: number
  /** Bytes and objects they retain, each byte once (an object under another of the group adds nothing). */
  retainedBytes: number
  retainedObjects: number
  /**
   * Where the holder keeps the pointers its chains to these objects start from: offsets in the
   * holding object, symbol or region (distinct, ascending; a sample of at most a few).
   */
  offsets: number[]
  /** When the offsets are a field of an array's entries (three or more, equally spaced): the entry size and the field's offset in an entry. */
  entries: {stride: number; field: number} | null
  /** The group's first object met (an index slot). */
  example: number
  leaked: boolean
}

/** Which untyped live objects a walk groups: the reachable ones, the leaked ones, or both. */
export type HolderScope = 'reachable' | 'leaked' | 'all'
export const HOLDER_SCOPES: readonly HolderScope[] = ['all', 'reachable', 'leaked']

/**
 * The holder walk's results as analyze stores them (queries/holder-groups.ts walks; the index
 * keeps what it found, so no query walks again). Each scope's groups are its own walk's: a type's
 * group mixes leaked and reachable blocks when both are walked, and the sampled offsets follow
 * the order objects are met in, so neither scope's groups are the other's filtered.
 */
export interface HolderTable {
  /** The holders; object.holder indexes them (the walk of every untyped live object made them). */
  holders: Holder[]
  groups: Record<HolderScope, HolderGroup[]>
}

/** A group as the table's JSON keeps it: its holder by position. */
type StoredGroup = Omit<HolderGroup, 'holder'> & {holder: number}

/**
 * The table as the index's bytes (holder.table): JSON, each holder once. The first `holders`
 * keep their positions (object.holder's ids); a group of another scope whose holder says the
 * same is given that one's position, else its holder is added after them.
 */
export function encodeHolderTable(table: HolderTable): Uint8Array {
  const holders = [...table.holders]
  const byObject = new Map<Holder, number>(holders.map((h, i) => [h, i]))
  const byText = new Map<string, number>()
  holders.forEach((h, i) => {
    if (!byText.has(JSON.stringify(h))) byText.set(JSON.stringify(h), i)
  })
  const position = (h: Holder): number => {
    const known = byObject.get(h) ?? byText.get(JSON.stringify(h))
    if (known !== undefined) return known
    holders.push(h)
    byObject.set(h, holders.length - 1)
    byText.set(JSON.stringify(h), holders.length - 1)
    return holders.length - 1
  }
  // Spread, the holder replaced in place: each group's fields keep the walk's order (a query's JSON is the same).
  const groups = Object.fromEntries(HOLDER_SCOPES.map(s => [s, table.groups[s].map((g): StoredGroup => ({...g, holder: position(g.holder)}))]))
  return Buffer.from(JSON.stringify({holders, groups}), 'utf8')
}

const isHolder = (h: unknown): h is Holder =>
  isObj(h) && typeof h.kind === 'string' && HOLDER_KINDS.has(h.kind) && typeof h.name === 'string' && (h.module === undefined || typeof h.module === 'string') && (h.anchors === undefined || (Array.isArray(h.anchors) && h.anchors.every(a => typeof a === 'string')))
const isEntries = (e: unknown) => e === null || (isObj(e) && isNum(e.stride) && isNum(e.field))

/** The table read back from holder.table's bytes, its shape checked: a bad one is a damaged index (`path`'s). */
export function decodeHolderTable(bytes: Uint8Array, path: string, slots: number): HolderTable {
  let parsed: unknown
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'))
  } catch {
    throw new DamagedIndexError(path, 'the holder table is not JSON')
  }
  if (!isObj(parsed) || !Array.isArray(parsed.holders) || !parsed.holders.every(isHolder) || !isObj(parsed.groups)) throw new DamagedIndexError(path, 'bad holder table')
  const holders = parsed.holders
  const stored = parsed.groups
  const groupOk = (g: unknown): g is StoredGroup =>
    isObj(g) &&
    ['size', 'objects', 'bytes', 'retainedBytes', 'retainedObjects'].every(k => isNum(g[k])) &&
    Number.isSafeInteger(g.holder) && (g.holder as number) >= 0 && (g.holder as number) < holders.length &&
    Number.isSafeInteger(g.example) && (g.example as number) >= 0 && (g.example as number) < slots &&
    Array.isArray(g.offsets) && g.offsets.every(isNum) && isEntries(g.entries) && typeof g.leaked === 'boolean'
  const groups = {} as Record<HolderScope, HolderGroup[]>
  for (const s of HOLDER_SCOPES) {
    const list = stored[s]
    if (!Array.isArray(list) || !list.every(groupOk)) throw new DamagedIndexError(path, `bad holder groups (${s})`)
    groups[s] = list.map(g => ({...g, holder: holders[g.holder]!}))
  }
  return {holders, groups}
}
