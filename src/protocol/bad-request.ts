// Owns `BAD_REQUEST_TYPE`, `encodeBadRequest`, `isBadRequestType`, `truncateBadRequest`, … The type
// name of the `google.rpc.BadRequest` error detail. Must not change: the code and status tables and
// error shapes every protocol shares.
import type { ErrorDetail, RpcError } from "./rpc-error.js";
import { utf8Decode } from "./bytes.js";

/** The type name of the `google.rpc.BadRequest` error detail. */
export const BAD_REQUEST_TYPE = "google.rpc.BadRequest";

/** One `google.rpc.BadRequest.FieldViolation`: the path of the bad value and what is wrong with it. */
export interface FieldViolation {
  /** The path of the value: `item.tags[2]` (a parameter's name, or `arg<N>` for an unnamed one, then fields and indexes). */
  readonly field: string;
  /** What is wrong: `must match ^[a-z]+$`. */
  readonly description: string;
}

function varint(out: number[], n: number): void {
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
}

function stringField(out: number[], tag: number, s: string): void {
  const b = Buffer.from(s, "utf8");
  out.push((tag << 3) | 2);
  varint(out, b.length);
  for (const x of b) out.push(x);
}

/** Encodes a `google.rpc.BadRequest` (field 1: repeated FieldViolation { field = 1; description = 2 }). */
export function encodeBadRequest(violations: readonly FieldViolation[]): ErrorDetail {
  const out: number[] = [];
  for (const v of violations) {
    const fv: number[] = [];
    stringField(fv, 1, v.field);
    stringField(fv, 2, v.description);
    out.push((1 << 3) | 2);
    varint(out, fv.length);
    for (const x of fv) out.push(x);
  }
  return { type: BAD_REQUEST_TYPE, value: Uint8Array.from(out) };
}

/** Reads length-delimited fields of a message; undefined when the bytes are not one. */
function fields(b: Uint8Array): [number, Uint8Array][] | undefined {
  const out: [number, Uint8Array][] = [];
  let i = 0;
  const read = (): number | undefined => {
    let n = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (i >= b.length) return undefined;
      const x = b[i++];
      n += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return n;
    }
    return undefined;
  };
  while (i < b.length) {
    const key = read();
    if (key === undefined || (key & 7) !== 2) return undefined;
    const len = read();
    if (len === undefined || i + len > b.length) return undefined;
    out.push([key >>> 3, b.subarray(i, i + len)]);
    i += len;
  }
  return out;
}

/** True for the type (name or URL) of a `google.rpc.BadRequest` detail. */
export function isBadRequestType(type: string): boolean {
  return type === BAD_REQUEST_TYPE || type.endsWith(`/${BAD_REQUEST_TYPE}`);
}

/**
 * A BadRequest detail cut to its first field violations that fit in `maxBytes` (whole ones, in
 * order); undefined when not even one fits or the bytes are not a BadRequest.
 */
export function truncateBadRequest(d: ErrorDetail, maxBytes: number): ErrorDetail | undefined {
  const b = d.value;
  if (b.length <= maxBytes) return d;
  let end = 0;
  for (const [, v] of fields(b) ?? []) {
    const after = v.byteOffset - b.byteOffset + v.length;
    if (after > maxBytes) break;
    end = after;
  }
  return end === 0 ? undefined : { type: d.type, value: b.subarray(0, end) };
}

/**
 * The field violations of an error's `google.rpc.BadRequest` details (what a validation error
 * carries, on every protocol); empty when it has none.
 */
export function badRequestViolations(err: Pick<RpcError, "details">): FieldViolation[] {
  const out: FieldViolation[] = [];
  for (const d of err.details) {
    if (!isBadRequestType(d.type)) continue;
    for (const [tag, fv] of fields(d.value) ?? []) {
      if (tag !== 1) continue;
      let field = "";
      let description = "";
      for (const [t, v] of fields(fv) ?? []) {
        if (t === 1) field = utf8Decode(v);
        else if (t === 2) description = utf8Decode(v);
      }
      out.push({ field, description });
    }
  }
  return out;
}
