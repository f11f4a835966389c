import {Args, Flags} from '@oclif/core'
import {moduleFlags} from './base-command.js'

/** Every query command takes an address, an optional core (or index), and the analysis flags. */
export const addressArgs = {
  address: Args.string({description: 'an address, 0x… hex', required: true}),
  core: Args.string({description: 'the core (or its .toma-index); default: the latest analysis in this folder'}),
}

/**
 * The flags that change what an analysis finds: the index records them, and a query given one
 * that differs from the index's analyses the core again. A flag added to `analyze` that changes
 * its answer belongs here.
 */
export const analysisFlags = {
  ...moduleFlags,
  'tcmalloc-version': Flags.string({description: 'gperftools version to assume (e.g. 2.10), instead of detecting it'}),
}

export const indexFlags = {
  ...analysisFlags,
  index: Flags.string({description: 'the index file to use or write'}),
}
