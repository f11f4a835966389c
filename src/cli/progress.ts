// Where commands found it before the decompression worker (src/input) needed it too.
export {progressWanted, silenceProgress, terminalProgress} from '../util/terminal-progress.js'
