// Compares two indexes array by array (and their meta), whatever the order of the arrays in the
// files: for A/B runs of a change that must not change what the index says.
//   node dist/tools/bench/index-diff.js INDEX_A INDEX_B   (exit 1 if they differ)
import {IndexFile} from '../../src/index/index-file.js'

const [pathA, pathB] = process.argv.slice(2)
const open = (path: string | undefined) => {
  try {
    return path ? IndexFile.open(path) : null
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e))
    process.exit(2)
  }
}
const a = open(pathA)
const b = open(pathB)
if (!a || !b) {
  console.error('usage: node dist/tools/bench/index-diff.js INDEX_A INDEX_B (two indexes of this format)')
  process.exit(2)
}
const names = [...new Set([...a.names(), ...b.names()])].sort()
const bytes = (x: ArrayBufferView) => Buffer.from(x.buffer, x.byteOffset, x.byteLength)
let differ = 0
for (const name of names) {
  if (!a.has(name) || !b.has(name)) console.log(`${name}: only in ${a.has(name) ? pathA : pathB}`)
  else if (!bytes(a.array(name)).equals(bytes(b.array(name)))) console.log(`${name}: differs`)
  else continue
  differ++
}
if (JSON.stringify(a.meta) !== JSON.stringify(b.meta)) {
  console.log('meta: differs')
  differ++
}
console.log(`${names.length} arrays and the meta: ${differ} differ`)
process.exit(differ === 0 ? 0 : 1)
