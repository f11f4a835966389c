import type {OpenedIndex} from './opened-index.js'

/**
 * The indexes a `toma shell` keeps open between its queries: each query asks openIndex as a
 * single command would, and gets the index (and the core with its module files) opened the first
 * time, without reading headers, module files or build-ids again.
 */
export class IndexSession {
  private readonly opened = new Map<string, OpenedIndex>()

  /** The core of queries that name none: the shell's own. */
  constructor(public defaultCore: string | undefined) {}

  /** The index remembered under key, or the one open() gives, remembered. */
  async remember(key: string, note: (line: string) => void, open: () => Promise<OpenedIndex>): Promise<OpenedIndex> {
    const known = this.opened.get(key)
    if (!known) {
      const o = await open()
      this.opened.set(key, o)
      return o
    }
    // Said again each time, as the single command says it.
    for (const w of known.index.meta.moduleWarnings) note(`warning: ${w.message}`)
    return known
  }

  /** Closes every index (after an analysis that may have rewritten one). */
  forget(): void {
    for (const o of new Set(this.opened.values())) {
      o.index.close()
      o.program().core.close()
    }
    this.opened.clear()
  }
}

let active: IndexSession | null = null

export function activeSession(): IndexSession | null {
  return active
}

export function setActiveSession(session: IndexSession | null): void {
  active = session
}
