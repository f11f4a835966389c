import {TomaError} from '../errors.js'
import {DEFAULT_LISTEN, exposedWarning, isLoopback, parseListen} from '../serve/listen-address.js'
import {SERVE_PAGES} from '../serve/pages/routes.js'
import type {ServedCore} from '../serve/serve-page.js'
import {startServer, type RunningServer} from '../serve/server.js'
import {openDiffSide, refuseOtherProgram} from './open-diff-pair.js'
import {openIndex} from './open-index.js'

/**
 * `toma serve`: opens the core's index (analysing first when needed, as every query does) and the
 * baseline's when given, starts the server, hands its URL to `print` (the command's one line of
 * output), and runs until SIGINT or SIGTERM, when it closes the server and the indexes.
 */
export async function serveCores(coreArg: string | undefined, baselineArg: string | undefined, flags: Record<string, unknown>, toolVersion: string, note: (line: string) => void, print: (url: string) => void): Promise<void> {
  // Refused first: a bad address is the answer before minutes of analysis.
  const listen = typeof flags.listen === 'string' ? parseListen(flags.listen) : DEFAULT_LISTEN
  if (baselineArg && coreArg) refuseOtherProgram(baselineArg, coreArg)
  const opened = await openIndex(coreArg, flags, note)
  const core: ServedCore = {index: opened.index, corePath: opened.corePath, indexPath: opened.indexPath, program: opened.program}
  let baseline: ServedCore | undefined
  if (baselineArg) {
    if (opened.corePath !== coreArg) refuseOtherProgram(baselineArg, opened.corePath)
    // --index names this core's index; the baseline's is its own.
    const side = await openDiffSide(baselineArg, {...flags, index: undefined}, note)
    baseline = {index: side.index, corePath: side.corePath, indexPath: side.index.path, program: () => side.program}
  }
  if (!isLoopback(listen.host)) note(exposedWarning(listen))
  let server: RunningServer
  try {
    server = await startServer({core, baseline, toolVersion}, SERVE_PAGES, listen)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    throw new TomaError(`--listen ${listen.host}:${listen.port}: cannot listen there (${code ?? (e as Error).message})`)
  }
  // Listened for before the URL is out: whoever reads it may stop the server at once, and a
  // signal with no listener yet would end the process without closing anything.
  const stopped = new Promise<void>(resolve => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve()
    }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  print(server.url)
  await stopped
  await server.close()
  for (const c of [core, baseline]) {
    if (!c) continue
    c.index.close()
    c.program().core.close()
  }
}
