#!/usr/bin/env node
// The launcher is src/cli/launch.ts (docs/ARCHITECTURE.md, "The launcher"): this file only calls it.
import {launch} from '../dist/src/cli/launch.js'

await launch(new URL(import.meta.url), process.argv.slice(2))
