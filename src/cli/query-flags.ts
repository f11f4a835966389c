import * as Args from './args.js'
import * as Flags from './flags.js'
import {moduleFlags} from './base-command.js'
import {runFlags} from './run-flags.js'

/** The address forms parseAddress accepts, as every help text states them. */
export const ADDRESS_FORMS = '0x… hexadecimal (e.g. 0x55d0c0a01048) or decimal (e.g. 94006225768520)'

/**
 * A core argument. Arguments come from the command line only: oclif would otherwise read a
 * missing argument from stdin whenever stdin is not a terminal (a pipe, or a script's open stdin,
 * where it would wait forever).
 */
export function coreArg(description: string) {
  return Args.string({description, ignoreStdin: true})
}

/** A core argument that must be given (analyze, info), from the command line only. */
export function requiredCoreArg(description: string) {
  return Args.string({description, required: true, ignoreStdin: true})
}

/** The optional core (or index) of every query command. */
export const queryCoreArgs = {core: coreArg('the core (or its .toma-index); default: the latest analysis in this folder')}

/** Every query about one object takes an address, an optional core (or index), and the analysis flags. */
export const addressArgs = {
  address: Args.string({description: `an address: ${ADDRESS_FORMS}`, required: true, ignoreStdin: true}),
  ...queryCoreArgs,
}

/**
 * The flags that change what an analysis finds: the index records them, and a query given one
 * that differs from the index's analyses the core again. A flag added to `analyze` that changes
 * its answer belongs here.
 */
export const analysisFlags = {
  ...moduleFlags,
  'tcmalloc-version': Flags.string({description: 'gperftools version (e.g. 2.10) or google/tcmalloc layout family (e.g. mongo-20240522, or 2026-08-release for one build mode) to assume, instead of detecting it'}),
}

/** How a query's own analysis runs, where it finds no index to answer from (run-flags.ts). */
export const queryRunFlags = runFlags('where the core is analysed first (no index yet): ')

export const indexFlags = {
  ...analysisFlags,
  ...queryRunFlags,
  index: Flags.string({description: 'the index file to use or write'}),
}
