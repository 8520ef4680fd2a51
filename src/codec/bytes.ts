/** A Buffer view of a Uint8Array's bytes, without copying them. */
export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The UTF-8 text of some bytes. */
export function decodeUtf8(b: Uint8Array): string {
  return asBuffer(b).toString("utf8");
}
