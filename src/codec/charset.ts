// Owns `checkCharset`, `decodeText`, `encodeText`. Checks a `charset` parameter up front, so a
// request naming one we cannot decode fails with 415 before its body is read. Returns the charset
// to pass to decodeText. Must not change: limits are checked before memory is spent; bad input is a
// 4xx naming the problem.
import type * as Iconv from "iconv-lite";
import { unsupportedMediaType } from "./bind-error.js";
import { lazyModule } from "./lazy-module.js";
import { quote } from "../protocol/wire-text.js";

/** iconv-lite (~0.7 MiB of live heap once its tables load) waits for the first non-UTF-8 charset. */
const iconv = lazyModule(() => require("iconv-lite") as typeof Iconv);

/** Charsets Node decodes natively; everything else goes through iconv-lite. */
const NATIVE: ReadonlyMap<string, BufferEncoding> = new Map([
  ["utf-8", "utf8"],
  ["utf8", "utf8"],
]);

/**
 * Checks a `charset` parameter up front, so a request naming one we cannot decode fails with 415
 * before its body is read. Returns the charset to pass to {@link decodeText}.
 */
export function checkCharset(charset: string | undefined): string {
  if (charset === undefined || charset === "") return "utf-8";
  const c = charset.trim().toLowerCase();
  if (NATIVE.has(c) || iconv().encodingExists(c)) return c;
  throw unsupportedMediaType(`unsupported charset ${quote(charset)}; use UTF-8, UTF-16LE/BE, US-ASCII, ISO-8859-1, GBK, Shift_JIS or another common charset`);
}

/**
 * Decodes bytes in a charset (checked with {@link checkCharset}). A leading byte-order mark is
 * dropped: it belongs to the encoding, not to the text.
 */
export function decodeText(bytes: Uint8Array, charset: string): string {
  const native = NATIVE.get(charset);
  if (native) {
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const skip = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
    return b.toString(native, skip);
  }
  return iconv().decode(bytes as Buffer, charset);
}

/** Encodes text in a charset (for tests and clients that send non-UTF-8 bodies). */
export function encodeText(text: string, charset: string): Buffer {
  return NATIVE.has(charset) ? Buffer.from(text, "utf8") : iconv().encode(text, charset);
}
