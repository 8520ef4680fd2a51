/**
 * Bounds on the text a server echoes back. Error messages often quote what the client sent (a
 * header value, a field name, a zone id, a bad value); written back whole, a 200 KB quote makes a
 * 200 KB `grpc-message` header, which the caller's HTTP/2 stack refuses (the stream, and with
 * some clients the whole connection, fails). Every error writer bounds the message it puts on the
 * wire with {@link boundMessage}, and messages that quote client input bound the quote where
 * they build it with {@link quote}.
 */

/** The longest error message written on the wire, in UTF-8 bytes (the mark of a cut included). */
export const MAX_MESSAGE_BYTES = 1024;

/** The longest piece of client input an error message quotes, in characters. */
const MAX_QUOTE_CHARS = 100;

/** What ends a text that was cut. */
const CUT_MARK = "…";

/**
 * `text` cut to at most `maxBytes` bytes of UTF-8, ending with "…" when it was cut (the mark is
 * within the bound); never splits a character. Linear in the bound, not in the text.
 */
export function boundMessage(text: string, maxBytes = MAX_MESSAGE_BYTES): string {
  if (text.length * 3 <= maxBytes) return text;
  const budget = maxBytes - 3; // "…" is 3 bytes
  let bytes = 0;
  let cut = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const n = pair ? 4 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (cut < 0 && bytes + n > budget) cut = i;
    bytes += n;
    if (bytes > maxBytes) return text.slice(0, cut) + CUT_MARK;
    if (pair) i++;
  }
  return text;
}

/** `text` cut to at most `maxChars` UTF-16 units (a cut text ends with "…"), never splitting a surrogate pair. */
export function cutText(text: string, maxChars = MAX_QUOTE_CHARS): string {
  if (text.length <= maxChars) return text;
  let end = maxChars - 1;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return text.slice(0, end) + CUT_MARK;
}

/**
 * Client input as an error message quotes it: in double quotes, JSON-escaped (so control
 * characters and line breaks cannot forge log lines), at most `maxChars` characters of it.
 */
export function quote(text: string, maxChars = MAX_QUOTE_CHARS): string {
  return JSON.stringify(cutText(text, maxChars));
}
