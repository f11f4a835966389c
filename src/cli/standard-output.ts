import {EXIT_OUTPUT_FAILED} from '../errors.js'
import {describeCode} from '../util/temporary-file.js'

let watching = false

/**
 * What toma does when standard output fails, as other Unix tools do: a reader that went away
 * (`toma export | head -c100`: EPIPE) ends toma quietly with exit 0, its answer having been
 * cut where the reader wanted; any other failure (`toma classes > /full/disk/x`: ENOSPC) is one
 * line on stderr and exit 74. Without this, Node reports the stream's error with a stack trace
 * and the source line it came from (a whole minified bundle on the fast path), or the command
 * waits for a 'drain' that never comes and Node exits 13 for the unsettled wait.
 */
export function watchStandardOutput(): void {
  if (watching) return
  watching = true
  // oclif's Command module registers a listener that rethrows all but EPIPE: this one replaces it.
  process.stdout.removeAllListeners('error')
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0)
    try {
      process.stderr.write(`toma: cannot write standard output: ${e.code ? `${describeCode(e.code)} (${e.code})` : e.message}\n`)
    } finally {
      process.exit(EXIT_OUTPUT_FAILED)
    }
  })
}
