/** A Buffer view of a Uint8Array's bytes, without copying them. */
export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The UTF-8 text of some bytes (on web runtimes too: the web client decodes its replies with it). */
export { utf8Decode as decodeUtf8 } from "../protocol/bytes.js";
