import type { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { overLimit } from "./bind-error.js";
import { compileTextConverter } from "./binder.js";
import { checkCharset, decodeText } from "./charset.js";
import type { RequestCodec } from "./codec.js";
import { requireIdlLess } from "./idl-guard.js";
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

/**
 * Percent-decodes one `application/x-www-form-urlencoded` token to bytes, as the WHATWG URL
 * standard does: `+` is a space and a `%` not followed by two hex digits stays literal.
 */
function percentDecode(body: Buffer, start: number, end: number): Buffer {
  let plain = true;
  for (let i = start; i < end; i++) {
    const b = body[i];
    if (b === PCT || b === PLUS) {
      plain = false;
      break;
    }
  }
  if (plain) return body.subarray(start, end);
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

function fieldTooLarge(name: string, limit: number): RpcError {
  return overLimit(`form field "${name.slice(0, 64)}" is larger than ${limit} bytes (limits.maxFieldBytes)`);
}

const EMPTY = Buffer.alloc(0);

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
      const name = decodeText(percentDecode(body, start, eq), charset);
      if (end - eq - 1 > maxFieldBytes * 3) throw fieldTooLarge(name, maxFieldBytes);
      const raw = eq < end ? percentDecode(body, eq + 1, end) : EMPTY;
      if (raw.length > maxFieldBytes) throw fieldTooLarge(name, maxFieldBytes);
      out.push({ name, value: decodeText(raw, charset) });
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
export function formBinder(method: MethodDescriptor): NamedBinder<string> {
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
    return formBinder(method)(parseForm(body, charset, limits.maxFieldBytes, limits.maxFormFields));
  },
};
