// npm run demo: unpack the bundled demo core (a real gcore of fixtures/programs/heapdemo.cpp on
// Debian's gperftools 2.10) and run toma on it as a user would.
import {spawnSync} from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import {root} from './project-root.js'

interface Truth { objects: Array<{name: string; address: string}> }
const demo = path.join(root, 'fixtures', 'demo')
const work = path.join(root, '.toma', 'demo')
fs.mkdirSync(work, {recursive: true})
const core = path.join(work, 'core.heapdemo')
if (!fs.existsSync(core) || fs.statSync(core).mtimeMs < fs.statSync(path.join(demo, 'core.br')).mtimeMs) {
  fs.writeFileSync(core, zlib.brotliDecompressSync(fs.readFileSync(path.join(demo, 'core.br'))))
}
const truth = JSON.parse(fs.readFileSync(path.join(demo, 'truth.json'), 'utf8')) as Truth
const object = (name: string) => {
  const o = truth.objects.find(x => x.name === name)
  if (!o) throw new Error(`fixtures/demo/truth.json names no object ${name}`)
  return o
}
const toma = (...args: string[]) => {
  console.log(`\n$ toma ${args.map(a => (a.includes(' ') ? JSON.stringify(a) : a)).join(' ')}`)
  const r = spawnSync(process.execPath, [path.join(root, 'bin', 'run.js'), ...args], {stdio: 'inherit', cwd: root})
  if (r.status !== 0) process.exit(r.status ?? 1)
}
const rel = (p: string) => path.relative(root, p)
toma('analyze', rel(core), '--tcmalloc', rel(path.join(demo, 'libtcmalloc.so.4')), '--exe', rel(path.join(demo, 'heapdemo')))
const customer = object('customer1')
const node = object('nodeA')
toma('find-object', '0x' + (Number.parseInt(customer.address, 16) + 20).toString(16))
toma('refs', node.address, '--depth', '3')
toma('classes')
toma('leaks')
// Why memory is held: the largest holders, the leak suspects, one object's path from a root.
toma('top', '--limit', '5')
toma('suspects')
toma('path', object('inventory.names.node3.value.buf').address)
// Threads: start routines, stacks and the frames that hold heap pointers.
toma('threads')
// All of it in one HTML page to open in a browser.
toma('report', '-o', rel(path.join(work, 'report.html')))
