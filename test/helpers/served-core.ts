import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {openIndex} from '../../src/cli/open-index.js'
import type {ServeContext} from '../../src/serve/serve-page.js'
import {brotliCorePath} from './fixture-core.js'
import {sharedAnalysis} from './shared-analysis.js'

const FIXTURE_ROOT = fileURLToPath(new URL('../../fixtures', import.meta.url))
export const DEMO_DIR = path.join(FIXTURE_ROOT, 'demo')

/** A core as `toma serve` holds it, from the run's one analysis of it (shared-analysis.ts): the context every page answers from. */
export async function servedCore(core: string, args: string[]): Promise<ServeContext> {
  const shared = await sharedAnalysis(core, args)
  const opened = await openIndex(shared.index, {}, () => {})
  return {core: opened, toolVersion: 'test'}
}

/** fixtures/demo (heapdemo, the README's demo core) as `toma serve fixtures/demo/…` serves it. */
export async function servedDemo(): Promise<ServeContext> {
  return servedCore(await brotliCorePath(path.join(DEMO_DIR, 'core.br')), demoFlags())
}

export function demoFlags(): string[] {
  return ['--exe', path.join(DEMO_DIR, 'heapdemo'), '--tcmalloc', path.join(DEMO_DIR, 'libtcmalloc.so.4')]
}

/** Closes what servedCore opened. */
export function closeServed(ctx: ServeContext | undefined): void {
  if (!ctx) return
  ctx.core.index.close()
  ctx.core.program().core.close()
}
