// Owns `encodeRequestWrapper`, `decodeRequestWrapper`, `encodeResponseWrapper`,
// `decodeResponseWrapper`, … Encodes a TripleRequestWrapper. Must not change: gRPC's wire rules
// (5-byte message prefix, grpc-status in trailers) that grpc-js and other peers rely on.
import type * as protobuf from "protobufjs";
import { protobufjs } from "../codec/protobufjs-runtime.js";
import { asBuffer } from "../codec/bytes.js";

/**
 * Dubbo's wrapper messages, which Dubbo Java's Triple client uses for methods without an IDL:
 * the arguments (and the result) travel as separately serialized byte strings, with their
 * serialization (`json` here) and Java type names beside them. Encoded by hand: they are tiny and fixed, and a Writer/Reader pass is cheaper than reflection.
 *
 * ```
 * message TripleRequestWrapper  { string serializeType = 1; repeated bytes args = 2; repeated string argTypes = 3; }
 * message TripleResponseWrapper { string serializeType = 1; bytes data = 2; string type = 3; }
 * ```
 */

/** A decoded TripleRequestWrapper. */
export interface TripleRequestWrapper {
  serializeType: string;
  args: Uint8Array[];
  argTypes: string[];
}

/** A decoded TripleResponseWrapper. */
export interface TripleResponseWrapper {
  serializeType: string;
  data: Uint8Array;
  type: string;
}

/** Encodes a TripleRequestWrapper. */
export function encodeRequestWrapper(w: TripleRequestWrapper): Buffer {
  const out = protobufjs.Writer.create();
  if (w.serializeType) out.uint32(10).string(w.serializeType);
  for (const a of w.args) out.uint32(18).bytes(a);
  for (const t of w.argTypes) out.uint32(26).string(t);
  return asBuffer(out.finish());
}

/**
 * Reads the fields of a wrapper message (both have fields 1–3, each a string or bytes): `field`
 * reads field `n`'s value from `r`; other fields are skipped. Throws on malformed bytes.
 */
function readWrapper(bytes: Uint8Array, field: (n: number, r: protobuf.Reader) => void): void {
  const r = protobufjs.Reader.create(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag === 10 || tag === 18 || tag === 26) field(tag >>> 3, r);
    else r.skipType(tag & 7);
  }
}

/** Decodes a TripleRequestWrapper; throws on malformed bytes. */
export function decodeRequestWrapper(bytes: Uint8Array): TripleRequestWrapper {
  const w: TripleRequestWrapper = { serializeType: "", args: [], argTypes: [] };
  readWrapper(bytes, (n, r) => {
    if (n === 1) w.serializeType = r.string();
    else if (n === 2) w.args.push(r.bytes());
    else w.argTypes.push(r.string());
  });
  return w;
}

/** Encodes a TripleResponseWrapper. */
export function encodeResponseWrapper(w: TripleResponseWrapper): Buffer {
  const out = protobufjs.Writer.create();
  if (w.serializeType) out.uint32(10).string(w.serializeType);
  if (w.data.length > 0) out.uint32(18).bytes(w.data);
  if (w.type) out.uint32(26).string(w.type);
  return asBuffer(out.finish());
}

/** Decodes a TripleResponseWrapper; throws on malformed bytes. */
export function decodeResponseWrapper(bytes: Uint8Array): TripleResponseWrapper {
  const w: TripleResponseWrapper = { serializeType: "", data: new Uint8Array(0), type: "" };
  readWrapper(bytes, (n, r) => {
    if (n === 1) w.serializeType = r.string();
    else if (n === 2) w.data = r.bytes();
    else w.type = r.string();
  });
  return w;
}

/** The `serializeType` of a TripleRequestWrapper (its first field), "" when absent or malformed. */
export function wrapperSerializeType(bytes: Uint8Array): string {
  if (bytes.length < 2 || bytes[0] !== 10) return "";
  const len = bytes[1];
  // Serialization names are short: a one-byte length.
  if (len > 127 || 2 + len > bytes.length) return "";
  return Buffer.from(bytes.buffer, bytes.byteOffset + 2, len).toString("latin1");
}
