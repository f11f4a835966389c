import {watchStandardOutput} from './standard-output.js'
import {format, inspect} from 'node:util'
import {jsonFlag} from './flags.js'

/**
 * The fast path of a toma call (bin/run.js): a command run without loading oclif, whose start
 * (its modules, its configuration and plugin loading) costs more than most queries
 * (docs/ARCHITECTURE.md, "Start-up design"). bin/run.js takes it only for a command it finds in the manifest, without --json,
 * help or version flags; `active` is set before the command's module is loaded, and tells
 * TomaCommand to extend FastCommand instead of oclif's Command. Whatever the fast parse below
 * does not recognise goes to oclif's own parser, so every error reads as before.
 */
export const fastLaunch = {active: false}

/** The parts of oclif's Config a command uses when it runs on the fast path. */
export interface FastConfig {
  bin: string
  name: string
  version: string
  root: string
  userAgent: string
  pjson: {name: string; version: string; oclif: Record<string, unknown>}
  runHook(): Promise<{successes: []; failures: []}>
  scopedEnvVar(key: string): string | undefined
}

/** A flag or argument definition as oclif's builders make it. */
interface Definition {
  type?: 'boolean' | 'option'
  parse?: (input: unknown, context: unknown, definition: Definition) => Promise<unknown>
  default?: unknown
  options?: readonly string[]
  multiple?: boolean
  required?: boolean
  char?: string
  exclusive?: string[]
  ignoreStdin?: boolean
  [key: string]: unknown
}

interface ParseOptions {
  flags?: Record<string, Definition>
  baseFlags?: Record<string, Definition>
  args?: Record<string, Definition>
  enableJsonFlag?: boolean
  strict?: boolean
}

/** Flag properties the fast parse does not handle (oclif's parser does). */
const UNHANDLED = ['aliases', 'charAliases', 'env', 'dependsOn', 'relationships', 'combinable', 'exactlyOne', 'atLeastOne', 'deprecated', 'deprecateAliases', 'allowStdin', 'delimiter', 'defaultHelp']

/**
 * What of oclif's Command the commands use (run, parse, log, jsonEnabled, init, catch), for the fast
 * path only: the command line has no --json there, so JSON output is never asked for.
 */
export abstract class FastCommand {
  static id: string
  static enableJsonFlag = false
  parsed = false
  id: string

  constructor(
    public argv: string[],
    public config: FastConfig,
  ) {
    this.id = this.ctor.id
  }

  static async run(this: new (argv: string[], config: FastConfig) => FastCommand, argv: string[], config: FastConfig): Promise<unknown> {
    // Output piped into `head` ends quietly, a full disk in one line (standard-output.ts).
    watchStandardOutput()
    return new this(argv, config)._run()
  }

  get ctor(): typeof FastCommand {
    return this.constructor as typeof FastCommand
  }

  abstract run(): Promise<unknown>

  async _run(): Promise<unknown> {
    let err: Error | undefined
    let result: unknown
    try {
      await this.init()
      result = await this.run()
    } catch (error) {
      err = error as Error
      await this.catch(err)
    } finally {
      await this.finally(err)
    }
    return result
  }

  protected async init(): Promise<void> {}

  protected async catch(err: Error): Promise<void> {
    throw err
  }

  protected async finally(_: Error | undefined): Promise<void> {}

  jsonEnabled(): boolean {
    return false
  }

  /** As oclif's Command.log and ux.stdout write (an empty first part is dropped, as there). */
  log(message: unknown = '', ...args: unknown[]): void {
    const first = typeof message === 'string' ? message : inspect(message)
    console.log(first ? format(first, ...args) : format(...args))
  }

  async parse(options: ParseOptions = this.ctor as ParseOptions, argv = this.argv): Promise<{args: Record<string, any>; flags: Record<string, any>; argv: unknown[]}> {
    const flags = {...(options.enableJsonFlag ? {json: jsonFlag as unknown as Definition} : {}), ...options.baseFlags, ...options.flags}
    const parsed = (await fastParse(argv, flags, options.args ?? {}, options.strict !== false, this)) ?? (await oclifParse(argv, {context: this, ...options, flags}))
    this.argv = [...argv]
    this.parsed = true
    return parsed
  }
}

async function oclifParse(argv: string[], options: object) {
  const Parser = await import('@oclif/core/parser')
  return Parser.parse(argv, options as Parameters<typeof Parser.parse>[1])
}

/**
 * The plain command lines oclif's parser would accept, parsed as it parses them: `--flag`,
 * `--flag value`, `--flag=value`, `-c value`, positional arguments. Null for anything else (an
 * unknown, repeated, exclusive or negated flag, `--`, a value beginning with '-', a missing or
 * extra argument, a value its definition refuses): oclif's parser then answers, with its message.
 */
export async function fastParse(argv: string[], flags: Record<string, Definition>, args: Record<string, Definition>, strict: boolean, context: object) {
  for (const [name, f] of Object.entries(flags)) {
    f.name = name
    if (UNHANDLED.some(k => f[k] !== undefined) || f.multiple || typeof f.default === 'function') return null
  }
  const argNames = Object.keys(args)
  for (const [name, a] of Object.entries(args)) {
    a.name = name
    if (a.multiple || a.options || a.default !== undefined) return null
  }
  const given = new Map<string, string | true>()
  const positional: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]
    if (!token.startsWith('-')) {
      positional.push(token)
      continue
    }
    let name: string | undefined
    let value: string | true | undefined
    if (token.startsWith('--')) {
      const eq = token.indexOf('=')
      name = eq === -1 ? token.slice(2) : token.slice(2, eq)
      if (eq !== -1) value = token.slice(eq + 1)
      if (!Object.hasOwn(flags, name)) return null
    } else {
      name = Object.keys(flags).find(n => flags[n].char !== undefined && `-${flags[n].char}` === token)
      if (name === undefined) return null
    }
    const f = flags[name]
    if (given.has(name)) return null
    if (f.type === 'boolean') {
      if (value !== undefined) return null
      value = true
    } else if (value === undefined) {
      value = argv[++i]
      if (value === undefined || value.startsWith('-')) return null
    }
    if (f.type !== 'boolean' && f.options && !f.options.includes(value as string)) return null
    given.set(name, value)
  }
  if (!strict || positional.length > argNames.length) return null
  for (const name of given.keys()) if (flags[name].exclusive?.some(other => given.has(other))) return null
  for (const [name, f] of Object.entries(flags)) if (f.required && !given.has(name)) return null
  // A missing argument oclif would read from stdin, or report as required.
  if (argNames.some((name, i) => positional[i] === undefined && (args[name].required || !args[name].ignoreStdin))) return null

  try {
    const parsedFlags: Record<string, unknown> = {}
    for (const [name, f] of Object.entries(flags)) {
      const value = given.has(name) ? (f.parse ? await f.parse(given.get(name), context, f) : given.get(name)) : f.default
      if (value !== undefined) parsedFlags[name] = value
    }
    const parsedArgs: Record<string, unknown> = {}
    const parsedArgv: unknown[] = []
    for (const [i, name] of argNames.entries()) {
      const a = args[name]
      if (positional[i] === undefined) continue
      const value = a.parse ? await a.parse(positional[i], context, a) : positional[i]
      parsedArgv.push(value)
      parsedArgs[name] = value
    }
    return {args: parsedArgs, flags: parsedFlags, argv: parsedArgv}
  } catch {
    return null
  }
}
