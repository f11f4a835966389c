// Writes oclif.manifest.json (src/cli/command-manifest.ts says why); run by `npm run build` and
// `prepare` after tsc. bin/run.js rewrites it whenever a compiled command is newer.
import {writeManifest} from '../../src/cli/command-manifest.js'
import {root} from '../project-root.js'

await writeManifest(root)
