#!/usr/bin/env node
import fs from 'node:fs'
import {fileURLToPath} from 'node:url'
import {MANIFEST, refreshStaleManifest} from '../dist/src/cli/command-manifest.js'
import {fastBundle, userAgent} from '../dist/src/cli/launch.js'

const root = new URL('..', import.meta.url)
await refreshStaleManifest(root)
const args = process.argv.slice(2)
// The analysis runs again in a second process with malloc tuned for its arrays (huge pages):
// src/cli/malloc-tuning.ts says why. A child that cannot start leaves it to this process.
if (args[0] === 'analyze' && !args.some(a => a === '--help' || a === '-h')) {
  const {tunedMallocEnvironment, runAgain} = await import('../dist/src/cli/malloc-tuning.js')
  const env = tunedMallocEnvironment(process.env)
  if (env) await runAgain(fileURLToPath(import.meta.url), args, env)
}
const pjson = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8'))

// The fast path: a command of the manifest run without oclif, or the version printed as oclif
// prints it. oclif's start (its modules, configuration, plugins) costs more than most queries
// (docs/ARCHITECTURE.md, "Start-up design"). Help, --json, the shell, an unknown command, or TOMA_OCLIF=1 (which the
// tests use to compare both paths) go to oclif, as does a command line the fast parse does not
// recognise, from inside the command (src/cli/fast-command.ts).
const agent = process.env.TOMA_OCLIF ? null : userAgent(pjson)
const command = fastCommand()
if (args[0] === '--version' && agent) {
  console.log(agent)
} else if (command) {
  // One bundled file when the build made one (tools/build/bundle-fast-path.ts: it switches its own
  // fast path on), else the compiled modules, some 70 of them.
  const compiled = command.relativePath.join('/')
  const bundle = fastBundle(root, command.id, compiled)
  let Command
  if (bundle) {
    Command = (await import(bundle.href)).default
  } else {
    const {fastLaunch} = await import('../dist/src/cli/fast-command.js')
    fastLaunch.active = true
    Command = (await import(new URL(compiled, root).href)).default
  }
  Command.id = command.id
  const config = {
    bin: pjson.oclif.bin,
    name: pjson.name,
    version: pjson.version,
    root: fileURLToPath(root),
    userAgent: agent,
    pjson,
    runHook: async () => ({successes: [], failures: []}),
    scopedEnvVar: key => process.env[`${pjson.oclif.bin.toUpperCase()}_${key}`],
  }
  await Command.run(args.slice(1), config)
} else {
  // '@oclif/core/execute', not '@oclif/core': the package's index loads every part of oclif and
  // checks the Node version with semver.
  const {execute} = await import('@oclif/core/execute')
  // The plugins (@oclif/plugin-help: the `help` command) are looked up only when help is asked for:
  // finding them costs every other call a glob match over the dependencies.
  const help = args.length === 0 || args[0] === 'help' || args.includes('--help') || args.includes('-h')
  if (!help) delete pjson.oclif.plugins
  await execute({dir: import.meta.url, loadOptions: {root: fileURLToPath(root), pjson}})
}

/** The manifest's entry for the command asked for, when the fast path can run it. */
function fastCommand() {
  const [id, ...rest] = args
  if (!id || id.startsWith('-') || id === 'shell' || !agent) return undefined
  if (rest.some(a => a === '--help' || a === '-h' || a === '--json' || a === '--')) return undefined
  if (process.env[`${pjson.oclif.bin.toUpperCase()}_CONTENT_TYPE`]) return undefined
  // oclif runs hooks (init, prerun, …) around a command; the fast path runs none, so any hook but
  // command_not_found (which only an unknown command reaches) sends every call to oclif.
  if (Object.keys(pjson.oclif.hooks ?? {}).some(h => h !== 'command_not_found')) return undefined
  try {
    const manifest = JSON.parse(fs.readFileSync(new URL(MANIFEST, root), 'utf8'))
    const entry = Object.hasOwn(manifest.commands, id) ? manifest.commands[id] : undefined
    return entry?.isESM && entry.relativePath && entry.pluginType === 'core' ? entry : undefined
  } catch {
    return undefined
  }
}
