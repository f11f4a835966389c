// Bundles each command's fast path, dist/fast/<command>.js (run by `npm run build`, `prepare` and
// `npm test` after tsc and the manifest). Node 20 loads ES modules at about 0.6 ms each and a
// query loads some 70 of toma's: a bundle of three files instead cuts most of that from every
// call (issue 13). bin/run.js uses a bundle only on the fast path and only while it is newer than its
// compiled command (src/cli/launch.ts); nothing else imports one.
//
// Two things keep the bundled code behaving as the compiled modules do:
// - Module state: the bundle holds its own copy of toma's modules, so it must never meet the
//   compiled ones in one process. Its entry switches its own copy of the fast path on before the
//   command's code runs, and bin/run.js loads no compiled module the command also loads. Packages
//   stay outside, loaded once from node_modules, but for three that every query loads and only
//   toma's own code uses: chalk (whose colour level toma sets), the demangler's glue, and elfy
//   (CommonJS: outside, it would start Node's CommonJS loader on every call, some 6 ms).
// - Files found next to a module (worker scripts, the demangler's wasm, `require` of CommonJS
//   packages): each module's `import.meta.url` is rewritten to its compiled file's URL, so
//   `new URL('./scan-worker.js', import.meta.url)` still names dist/src/graph/scan-worker.js.
import fs from 'node:fs'
import path from 'node:path'
import * as esbuild from 'esbuild'
import {FAST_BUNDLE_DIR} from '../../src/cli/launch.js'
import {root} from '../project-root.js'

const dist = path.join(root, 'dist')
const outdir = path.join(root, FAST_BUNDLE_DIR)
const commands = fs
  .readdirSync(path.join(dist, 'commands'))
  .filter(f => f.endsWith('.js'))
  .map(f => f.slice(0, -3))

const pjson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {dependencies: Record<string, string>}
const BUNDLED_PACKAGES = ['chalk', 'gecko-profiler-demangle', 'elfy']
const external = Object.keys(pjson.dependencies)
  .filter(name => !BUNDLED_PACKAGES.includes(name))
  .flatMap(name => [name, `${name}/*`])

const entries: esbuild.Plugin = {
  name: 'fast-path-entries',
  setup(build) {
    build.onResolve({filter: /^fast-entry:/}, args => ({path: args.path.slice('fast-entry:'.length), namespace: 'fast-entry'}))
    // The fast path switched on first: imports run in order, so base-command.js, which picks
    // oclif's Command or FastCommand when it runs, sees it on.
    build.onLoad({filter: /.*/, namespace: 'fast-entry'}, args => ({
      contents: `import ${JSON.stringify(path.join(dist, 'src/cli/fast-launch-on.js'))}\nexport {default} from ${JSON.stringify(path.join(dist, 'commands', `${args.path}.js`))}\n`,
      resolveDir: root,
    }))
  },
}

const moduleUrls: esbuild.Plugin = {
  name: 'compiled-module-urls',
  setup(build) {
    build.onLoad({filter: /\.js$/}, args => {
      const source = fs.readFileSync(args.path, 'utf8')
      if (!source.includes('import.meta.url')) return undefined
      const relative = path.relative(outdir, args.path).split(path.sep).join('/')
      return {contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`), loader: 'js' as const}
    })
  },
}

// elfy's parser requires node:assert at load for one check in Parser.parse, which toma never calls
// (src/elf/headers.ts runs its steps itself); loading assert cost every query some 2 ms. In the
// bundle elfy gets an object that loads the real one on first use.
const lazyAssert: esbuild.Plugin = {
  name: 'lazy-assert-for-elfy',
  setup(build) {
    build.onResolve({filter: /^assert$/}, args => (args.importer.includes(`${path.sep}elfy${path.sep}`) ? {path: 'assert', namespace: 'lazy-assert'} : undefined))
    build.onLoad({filter: /.*/, namespace: 'lazy-assert'}, () => ({
      contents: "module.exports = new Proxy({}, {get: (_, key) => require('node:assert')[key]})",
      loader: 'js' as const,
    }))
  },
}

fs.rmSync(outdir, {recursive: true, force: true})
// One build a command, each split at its dynamic imports: the analysis a query runs only when its
// index is missing or stale goes to chunks of that command's own (dist/fast/<command>.<hash>.js),
// with the built-in modules only it imports (worker_threads, v8, vm), so an answer from the index
// compiles and loads only what it runs: the command's file and the one chunk it shares with the
// analysis. (One build for all commands would share chunks between them: some 16 files a query.)
await Promise.all(
  commands.map(c =>
    esbuild.build({
      entryPoints: {[c]: `fast-entry:${c}`},
      outdir,
      // Beside the entries, in the one folder whose place import.meta.url is rewritten against.
      chunkNames: `${c}.[hash]`,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external,
      plugins: [entries, moduleUrls, lazyAssert],
      // A bundled CommonJS package (elfy) requires built-in modules (assert): an ES module has no
      // `require` of its own.
      banner: {js: "import {createRequire as __toma_createRequire} from 'node:module';const require=__toma_createRequire(import.meta.url);"},
      logLevel: 'warning',
      // Less text to compile on each call; names are kept, so a stack trace still reads.
      minifyWhitespace: true,
      minifySyntax: true,
    }),
  ),
)
