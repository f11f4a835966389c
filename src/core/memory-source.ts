import {AddressSpace, type Segment} from './address-space.js'
import {FileReader, type FileOverlay} from './file-reader.js'

/**
 * A core's memory as plain data (file path, overlay, segment table): what a worker thread needs to
 * open the core and read its own address ranges, without the parsed Program.
 */
export interface MemorySource {
  path: string
  overlay?: FileOverlay
  segments: readonly Segment[]
}

/** Opens the core file again and reads its memory through the given segment table. */
export function openMemory(source: MemorySource): {memory: AddressSpace; close(): void} {
  const file = new FileReader(source.path, receivedOverlay(source))
  return {memory: new AddressSpace(file, source.segments), close: () => file.close()}
}

/** The overlay as a worker receives it: structured cloning turns its Buffers into plain Uint8Arrays, wrapped back here. */
export function receivedOverlay(source: MemorySource): FileOverlay | undefined {
  return source.overlay && {
    size: source.overlay.size,
    patches: source.overlay.patches.map(p => ({offset: p.offset, bytes: Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength)})),
  }
}
