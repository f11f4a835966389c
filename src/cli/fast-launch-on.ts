import {fastLaunch} from './fast-command.js'

// Imported first by each bundle of a command's fast path (tools/build/bundle-fast-path.ts), so that
// the bundle's own copy of the fast path is on before its base-command.js runs and picks its
// base class. bin/run.js switches the compiled copy on itself.
fastLaunch.active = true
