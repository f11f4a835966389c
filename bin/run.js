#!/usr/bin/env node
import fs from 'node:fs'
import {fileURLToPath} from 'node:url'
// '@oclif/core/execute', not '@oclif/core': the package's index loads every part of oclif and
// checks the Node version with semver, a large part of a call's start-up (README, "Start-up").
import {execute} from '@oclif/core/execute'
import {refreshStaleManifest} from '../dist/src/cli/command-manifest.js'

await refreshStaleManifest(new URL('..', import.meta.url))
// The plugins (@oclif/plugin-help: the `help` command) are looked up only when help is asked for:
// finding them costs every other call a glob match over the dependencies.
const args = process.argv.slice(2)
const help = args.length === 0 || args[0] === 'help' || args.includes('--help') || args.includes('-h')
const pjson = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
if (!help) delete pjson.oclif.plugins
await execute({dir: import.meta.url, loadOptions: {root: fileURLToPath(new URL('..', import.meta.url)), pjson}})
