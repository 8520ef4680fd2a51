// Owns `decodeProtoMessage`, `encodeProtoMessage`, `encodeProtoFrame`, `protoRequestCodec`, …
// Decodes one binary protobuf message of the method's request type. Must not change: limits are
// checked before memory is spent; bad input is a 4xx naming the problem.
import type * as protobuf from "protobufjs";
import { protobufjs } from "./protobufjs-runtime.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { decodeError, unsupportedMediaType } from "./bind-error.js";
import type { RequestCodec, ResponseCodec } from "./codec.js";

function needsIdl(method: MethodDescriptor): never {
  throw unsupportedMediaType(`${method.path} is not bound to a .proto, so application/proto cannot carry its arguments; use application/json`);
}

/** Decodes one binary protobuf message of the method's request type. */
export function decodeProtoMessage(method: MethodDescriptor, body: Uint8Array): unknown {
  const type = method.requestType ?? needsIdl(method);
  try {
    return type.decode(body);
  } catch (e) {
    throw decodeError(`invalid ${type.fullName.slice(1)} message: ${(e as Error).message}`, e);
  }
}

/** The response value as a message `type.encode` accepts. */
function checkedMessage(type: protobuf.Type, value: unknown): Record<string, unknown> {
  const v = (value ?? {}) as Record<string, unknown>;
  // A value that verifies is encoded as it is (no copy); otherwise fromObject converts what it
  // can (enum names, numeric strings, base64 bytes) and the result must verify.
  if (type.verify(v) === null) return v;
  const converted = type.fromObject(v) as unknown as Record<string, unknown>;
  const err = type.verify(converted);
  if (err) throw new TypeError(`the handler returned an invalid ${type.fullName.slice(1)}: ${err}`);
  return converted;
}

/** Encodes a result as the method's response message. */
export function encodeProtoMessage(method: MethodDescriptor, value: unknown): Buffer {
  const type = method.responseType ?? needsIdl(method);
  const bytes = type.encode(checkedMessage(type, value)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * One writer for every encode: encoding is synchronous, so it is never shared by two messages
 * at once. A writer that grew past this size for a large message is replaced, not kept.
 */
let writer = protobufjs.Writer.create();
const KEEP_WRITER_BYTES = 64 * 1024;

/**
 * Encodes a result as an uncompressed gRPC frame (flag, 4-byte length, message) in one buffer:
 * no writer, no intermediate copy.
 */
export function encodeProtoFrame(method: MethodDescriptor, value: unknown): Buffer {
  const type = method.responseType ?? needsIdl(method);
  const v = checkedMessage(type, value);
  const w = writer;
  w.pos = 0;
  w.states = null;
  try {
    type.encode(v, w);
    const n = w.pos;
    const out = Buffer.allocUnsafe(5 + n);
    out[0] = 0;
    out.writeUInt32BE(n, 1);
    w.finishInto(out, 5);
    return out;
  } finally {
    if (w.buf.length > KEEP_WRITER_BYTES) writer = protobufjs.Writer.create();
  }
}

/** `application/proto`: the single request message of a .proto method. */
export const protoRequestCodec: RequestCodec = {
  mediaTypes: ["application/proto", "application/x-protobuf", "application/protobuf"],
  responseMediaType: "application/proto",
  decode: (method, body) => [decodeProtoMessage(method, body)],
};

export const protoResponseCodec: ResponseCodec = {
  mediaType: "application/proto",
  encode: encodeProtoMessage,
};
