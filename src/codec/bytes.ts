/** A Buffer view of a Uint8Array's bytes, without copying them. */
export function asBuffer(b: Uint8Array): Buffer {
  // Where there is no Buffer (the web client in a browser) the bytes stay a Uint8Array.
  if (typeof Buffer === "undefined") return b as Buffer;
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The UTF-8 text of some bytes (on web runtimes too: the web client decodes its replies with it). */
export { utf8Decode as decodeUtf8 } from "../protocol/bytes.js";
