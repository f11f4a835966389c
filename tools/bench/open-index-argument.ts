// The index a bench tool was given on its command line, opened, or one line on stderr and an exit:
// 2 with the tool's usage where no path was given, 2 where the file cannot be read as an index
// (missing, damaged), 1 where it is an index of another format version.
import {IndexFile} from '../../src/index/index-file.js'

export function openIndexArgument(path: string | undefined, usage: string): IndexFile {
  if (!path) {
    console.error(`usage: ${usage}`)
    process.exit(2)
  }
  let index: IndexFile | null
  try {
    index = IndexFile.open(path)
  } catch (e) {
    console.error(e instanceof Error ? e.message : String(e))
    process.exit(2)
  }
  if (!index) {
    console.error(`${path}: index of another format version (re-run toma analyze)`)
    process.exit(1)
  }
  return index
}
