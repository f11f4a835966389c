// Writes oclif.manifest.json (src/cli/command-manifest.ts says why); run by `npm run build` and
// `prepare` after tsc. bin/run.js rewrites it whenever a compiled command is newer.
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {writeManifest} from '../dist/src/cli/command-manifest.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
await writeManifest(root)
