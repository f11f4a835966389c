// The project's root folder, for the tools that read its files (fixtures, package.json) or run
// bin/run.js: the nearest folder above this module that holds package.json. The same whether the
// module runs compiled (dist/tools/...), from its source under vitest (tools/...), or from a copy
// of dist/ inside the project (the fuzzer's snapshot in .toma/).
import fs from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

function projectRootAbove(dir: string): string {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return d
    if (path.dirname(d) === d) throw new Error(`no package.json above ${dir}`)
  }
}

export const root = projectRootAbove(path.dirname(fileURLToPath(import.meta.url)))

/** True when the module at `moduleUrl` is the one node was asked to run (not imported). */
export function isMain(moduleUrl: string): boolean {
  return Boolean(process.argv[1]) && path.resolve(process.argv[1]!) === fileURLToPath(moduleUrl)
}
