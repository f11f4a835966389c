import fs from 'node:fs'
import os from 'node:os'
import {fileURLToPath} from 'node:url'
import {MANIFEST, refreshStaleManifest} from './command-manifest.js'

/**
 * The launcher: how a call of toma starts (bin/run.js only calls `launch`). In order: the manifest
 * kept fresh, `analyze` run again with malloc tuned, then the command on the fast path (without
 * oclif) or through oclif. Kept apart from the fast path's own modules, which the bundles hold
 * copies of (tools/build/bundle-fast-path.ts): a process must load either those or the bundle,
 * never both. docs/ARCHITECTURE.md, "The launcher" and "Start-up design", says why each step.
 */

/** What of package.json the launcher reads. */
interface PackageJson {
  name: string
  version: string
  oclif: {bin: string; plugins?: string[]; hooks?: Record<string, unknown>}
}

/** The manifest's entry for one command (oclif.manifest.json). */
interface ManifestEntry {
  id: string
  isESM?: boolean
  relativePath?: string[]
  pluginType?: string
}

/** A command class as the fast path runs it (src/cli/base-command.ts). */
interface RunnableCommand {
  id: string
  run(argv: string[], config: unknown): Promise<unknown>
}

/** Runs toma with `args`; `bin` is the launching script's URL (bin/run.js), which `analyze` runs again. */
export async function launch(bin: URL, args: string[]): Promise<void> {
  const root = new URL('..', bin)
  await refreshStaleManifest(root)
  // The analysis runs again in a second process with malloc tuned for its arrays (huge pages):
  // src/cli/malloc-tuning.ts says why. A child that cannot start leaves it to this process.
  if (analysesTuned(args)) {
    const {tunedMallocEnvironment, runAgain} = await import('./malloc-tuning.js')
    const env = tunedMallocEnvironment(process.env)
    if (env) await runAgain(fileURLToPath(bin), args, env)
  }
  const pjson = JSON.parse(fs.readFileSync(new URL('package.json', root), 'utf8')) as PackageJson
  // The fast path: a command of the manifest run without oclif, or the version printed as oclif
  // prints it. oclif's start (its modules, configuration, plugins) costs more than most queries.
  // Help, --json, the shell, an unknown command, or TOMA_OCLIF=1 (which the tests use to compare
  // both paths) go to oclif, as does a command line the fast parse does not recognise, from inside
  // the command (src/cli/fast-command.ts).
  const agent = process.env.TOMA_OCLIF ? null : userAgent(pjson)
  const command = agent ? fastCommand(root, pjson, args) : undefined
  if (args[0] === '--version' && agent) console.log(agent)
  else if (command) await runFast(root, pjson, agent!, command, args)
  else await runWithOclif(bin, root, pjson, args)
}

/**
 * Whether the call runs again with malloc tuned: `analyze`, and a query given `--memory-limit`,
 * which asks for the analysis it runs where it finds no index to keep to a limit (with malloc as
 * it is, such an analysis held 865 MiB under 512M at scale 24, where `analyze` held 548). Any
 * other query keeps its quick start: it answers from an index, or runs its analysis untuned. Not
 * the shell: a Ctrl-C at its prompt reaches both processes from the terminal, and the first would
 * pass it on a second time.
 */
export function analysesTuned(args: string[]): boolean {
  const end = args.indexOf('--')
  const flags = end < 0 ? args : args.slice(0, end)
  if (flags.some(a => a === '--help' || a === '-h')) return false
  return args[0] === 'analyze' || (args[0] !== 'shell' && flags.some(a => a === '--memory-limit' || a.startsWith('--memory-limit=')))
}

/** The manifest's entry for the command asked for, when the fast path can run it. */
function fastCommand(root: URL, pjson: PackageJson, args: string[]): (ManifestEntry & {relativePath: string[]}) | undefined {
  const [id, ...rest] = args
  if (!id || id.startsWith('-') || id === 'shell') return undefined
  if (rest.some(a => a === '--help' || a === '-h' || a === '--json' || a === '--')) return undefined
  if (process.env[`${pjson.oclif.bin.toUpperCase()}_CONTENT_TYPE`]) return undefined
  // oclif runs hooks (init, prerun, …) around a command; the fast path runs none, so any hook but
  // command_not_found (which only an unknown command reaches) sends every call to oclif.
  if (Object.keys(pjson.oclif.hooks ?? {}).some(h => h !== 'command_not_found')) return undefined
  try {
    const manifest = JSON.parse(fs.readFileSync(new URL(MANIFEST, root), 'utf8')) as {commands: Record<string, ManifestEntry>}
    const entry = Object.hasOwn(manifest.commands, id) ? manifest.commands[id] : undefined
    return entry?.isESM && entry.relativePath && entry.pluginType === 'core' ? (entry as ManifestEntry & {relativePath: string[]}) : undefined
  } catch {
    return undefined
  }
}

/** A command run without oclif: its bundle, or its compiled modules, with a stand-in for oclif's configuration. */
async function runFast(root: URL, pjson: PackageJson, agent: string, command: ManifestEntry & {relativePath: string[]}, args: string[]): Promise<void> {
  // One bundled file when the build made one (tools/build/bundle-fast-path.ts: it switches its own
  // fast path on), else the compiled modules, some 70 of them.
  const compiled = command.relativePath.join('/')
  const bundle = fastBundle(root, command.id, compiled)
  let Command: RunnableCommand
  if (bundle) {
    Command = ((await import(bundle.href)) as {default: RunnableCommand}).default
  } else {
    const {fastLaunch} = await import('./fast-command.js')
    fastLaunch.active = true
    Command = ((await import(new URL(compiled, root).href)) as {default: RunnableCommand}).default
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
    scopedEnvVar: (key: string) => process.env[`${pjson.oclif.bin.toUpperCase()}_${key}`],
  }
  await Command.run(args.slice(1), config)
}

/** Everything the fast path does not take: oclif's own start. */
async function runWithOclif(bin: URL, root: URL, pjson: PackageJson, args: string[]): Promise<void> {
  // '@oclif/core/execute', not '@oclif/core': the package's index loads every part of oclif and
  // checks the Node version with semver.
  const {execute} = await import('@oclif/core/execute')
  // The plugins (@oclif/plugin-help: the `help` command) are looked up only when help is asked for:
  // finding them costs every other call a glob match over the dependencies.
  const help = args.length === 0 || args[0] === 'help' || args.includes('--help') || args.includes('-h')
  if (!help) delete pjson.oclif.plugins
  await execute({dir: bin.href, loadOptions: {root: fileURLToPath(root), pjson: pjson as never}})
}

/** Where tools/build/bundle-fast-path.ts writes one bundle per command, relative to the package. */
export const FAST_BUNDLE_DIR = 'dist/fast'

/**
 * The bundle of command `id`'s fast path, or undefined when there is none or it is older than
 * the compiled command (a plain `tsc` since the last build): the compiled modules then run, as
 * they do without bundles. One stat each: tsc rewrites every command file whenever it builds.
 */
export function fastBundle(root: URL, id: string, commandPath: string): URL | undefined {
  const bundle = new URL(`${FAST_BUNDLE_DIR}/${id}.js`, root)
  const made = fs.statSync(bundle, {throwIfNoEntry: false})?.mtimeMs
  if (made === undefined) return undefined
  const compiled = fs.statSync(new URL(commandPath, root), {throwIfNoEntry: false})?.mtimeMs
  return compiled !== undefined && made >= compiled ? bundle : undefined
}

/**
 * The user agent oclif prints for --version, or null where oclif's platform detection is needed:
 * on what may be WSL (a Microsoft kernel, as is-wsl looks for it), which it names `wsl`.
 */
export function userAgent(pjson: {name: string; version: string}): string | null {
  if (process.platform === 'linux' && (os.release().toLowerCase().includes('microsoft') || procVersion().includes('microsoft'))) return null
  const arch = os.arch() === 'ia32' ? 'x86' : os.arch()
  return `${pjson.name}/${pjson.version} ${os.platform()}-${arch} node-${process.version}`
}

function procVersion(): string {
  try {
    return fs.readFileSync('/proc/version', 'utf8').toLowerCase()
  } catch {
    return ''
  }
}
