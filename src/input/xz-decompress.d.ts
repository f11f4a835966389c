// xz-decompress ships no type declarations; the one class toma uses.
declare module 'xz-decompress' {
  export class XzReadableStream extends ReadableStream<Uint8Array> {
    constructor(compressed: ReadableStream<Uint8Array>)
  }
}
