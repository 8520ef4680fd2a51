/**
 * Byte and text conversions that run everywhere: through Node's `Buffer` where there is one (the
 * server's and the Node client's paths keep its speed and its Buffer results), through
 * `TextEncoder`, `TextDecoder`, `atob` and `btoa` on web runtimes (browsers, Deno, workers),
 * where the web client (`triple-rpc/web`) runs the same wire rules.
 */

const NodeBuffer: typeof Buffer | undefined = (globalThis as { Buffer?: typeof Buffer }).Buffer;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The UTF-8 bytes of a string. */
export function utf8Encode(s: string): Uint8Array {
  return NodeBuffer ? NodeBuffer.from(s, "utf8") : encoder.encode(s);
}

/** The UTF-8 text of some bytes (malformed sequences become U+FFFD). */
export function utf8Decode(b: Uint8Array): string {
  if (NodeBuffer) return (NodeBuffer.isBuffer(b) ? b : NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength)).toString("utf8");
  return decoder.decode(b);
}

/** The Latin-1 text of some bytes: one character per byte (HTTP/1-style header blocks). */
export function latin1Decode(b: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1");
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return s;
}

/**
 * The bytes of base64 text, standard or URL-safe, padded or not, as Node's `Buffer.from(s,
 * "base64")` reads it (characters outside the alphabet are skipped).
 */
export function base64Decode(s: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(s, "base64");
  let t = s
    .replace(/[^A-Za-z0-9+/_-]/g, "")
    .replace(/-/g, "+")
    .replace(/_/g, "/");
  if (t.length % 4 === 1) t = t.slice(0, -1);
  const bin = atob(t + "===".slice((t.length + 3) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Standard padded base64 of some bytes. */
export function base64Encode(b: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64");
  return btoa(latin1Decode(b));
}

/** The bytes of several chunks, in one array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  if (NodeBuffer) return NodeBuffer.concat(parts);
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
