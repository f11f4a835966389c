import {Args, Flags} from '@oclif/core'
import {moduleFlags} from './base-command.js'

/** Every query command takes an address, an optional core (or index), and the analysis flags. */
export const addressArgs = {
  address: Args.string({description: 'an address, 0x… hex', required: true}),
  core: Args.string({description: 'the core (or its .toma-index); default: the latest analysis in this folder'}),
}

export const indexFlags = {
  ...moduleFlags,
  index: Flags.string({description: 'the index file to use or write'}),
  'tcmalloc-version': Flags.string({description: 'gperftools version to assume if the core must be analysed'}),
}
