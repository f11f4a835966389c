// Where commands found it before the decompression worker (src/input) needed it too.
export {terminalProgress} from '../util/terminal-progress.js'
