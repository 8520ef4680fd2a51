// Owns `parseForm`, `formRequestCodec`. Parses a url-encoded form into name/value pairs in body
// order. Names and values are decoded in the request's charset (UTF-8 by default). Must not change:
// limits are checked before memory is spent; bad input is a 4xx naming the problem.
import type { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { overLimit } from "./bind-error.js";
import { withNumberLimits } from "./big-numbers.js";
import { compileTextConverter } from "./binder.js";
import { checkCharset, decodeText } from "./charset.js";
import type { RequestCodec } from "./codec.js";
import { requireIdlLess } from "./idl-guard.js";
import { bindAll } from "./validation.js";
import { compileNamedBinder, type NamedBinder, type NamedValue } from "./named-binder.js";

const AMP = 0x26;
const EQ = 0x3d;
const PLUS = 0x2b;
const PCT = 0x25;

function hex(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  const l = b | 0x20;
  return l >= 0x61 && l <= 0x66 ? l - 0x61 + 10 : -1;
}

/** True when bytes `start`–`end` hold no `%` escape and no `+`: the token is its own text. */
function isPlain(body: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = body[i];
    if (b === PCT || b === PLUS) return false;
  }
  return true;
}

/**
 * Percent-decodes one `application/x-www-form-urlencoded` token to bytes, as the WHATWG URL
 * standard does: `+` is a space and a `%` not followed by two hex digits stays literal.
 */
function percentDecode(body: Buffer, start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(end - start);
  let o = 0;
  for (let i = start; i < end; i++) {
    const b = body[i];
    if (b === PLUS) out[o++] = 0x20;
    else if (b === PCT && i + 2 < end && hex(body[i + 1]) >= 0 && hex(body[i + 2]) >= 0) {
      out[o++] = (hex(body[i + 1]) << 4) | hex(body[i + 2]);
      i += 2;
    } else out[o++] = b;
  }
  return out.subarray(0, o);
}

const UTF8 = new Set(["utf-8", "utf8"]);

/**
 * One token decoded to text; `maxBytes` bounds its decoded size. A plain UTF-8 token (the usual
 * case) is read straight from the body: no intermediate buffer per field.
 */
function decodeToken(body: Buffer, start: number, end: number, charset: string, maxBytes: number, name?: string): string {
  if (start >= end) return "";
  if (!isPlain(body, start, end)) {
    const raw = percentDecode(body, start, end);
    if (raw.length > maxBytes) throw fieldTooLarge(name ?? "", maxBytes);
    return decodeText(raw, charset);
  }
  if (end - start > maxBytes) throw fieldTooLarge(name ?? "", maxBytes);
  if (!UTF8.has(charset)) return decodeText(body.subarray(start, end), charset);
  // A byte-order mark belongs to the encoding, not to the text (as decodeText drops it).
  const bom = end - start >= 3 && body[start] === 0xef && body[start + 1] === 0xbb && body[start + 2] === 0xbf;
  return body.toString("utf8", bom ? start + 3 : start, end);
}

function fieldTooLarge(name: string, limit: number): RpcError {
  return overLimit(`form field "${name.slice(0, 64)}" is larger than ${limit} bytes (limits.maxFieldBytes)`);
}

/**
 * Parses a url-encoded form into name/value pairs in body order. Names and values are decoded
 * in the request's charset (UTF-8 by default); each value is limited to `maxFieldBytes` and the
 * form to `maxFields` pairs (413 naming the limit). One pass: every byte is looked at a bounded
 * number of times, whatever the body (`a&a&a…` included).
 */
export function parseForm(body: Buffer, charset: string, maxFieldBytes: number, maxFields = Number.POSITIVE_INFINITY): NamedValue<string>[] {
  const out: NamedValue<string>[] = [];
  const n = body.length;
  let start = 0;
  while (start <= n) {
    let end = body.indexOf(AMP, start);
    if (end < 0) end = n;
    if (end > start) {
      if (out.length >= maxFields) throw overLimit(`the form has more than ${maxFields} fields (limits.maxFormFields)`);
      // The first `=` of this field only: never search past its `&`.
      let eq = start;
      while (eq < end && body[eq] !== EQ) eq++;
      // A name is bounded by the body limit only (as before); a value by maxFieldBytes.
      const name = decodeToken(body, start, eq, charset, Number.POSITIVE_INFINITY);
      out.push({ name, value: decodeToken(body, eq + 1, end, charset, maxFieldBytes, name) });
    }
    start = end + 1;
  }
  return out;
}

const binders = new WeakMap<MethodDescriptor, NamedBinder<string>>();

function textConv(t: TypeDesc) {
  return compileTextConverter(t);
}

/** The compiled form binder of a method (cached: built on its first form call). */
function formBinder(method: MethodDescriptor): NamedBinder<string> {
  let b = binders.get(method);
  if (!b) {
    b = compileNamedBinder(method.params, "form field", textConv);
    binders.set(method, b);
  }
  return b;
}

/**
 * `application/x-www-form-urlencoded`: a map parameter receives every pair; otherwise values bind
 * by name, or in parameter order when unnamed, converted to each parameter's type.
 */
export const formRequestCodec: RequestCodec = {
  mediaTypes: ["application/x-www-form-urlencoded"],
  responseMediaType: "application/json",
  decode(method, body, mediaType, limits) {
    requireIdlLess(method, mediaType.type);
    const charset = checkCharset(mediaType.params.charset);
    const fields = parseForm(body, charset, limits.maxFieldBytes, limits.maxFormFields);
    return withNumberLimits(limits, () => bindAll(method, () => formBinder(method)(fields)));
  },
};
