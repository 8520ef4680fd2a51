import type { MethodDescriptor } from "../service/descriptors.js";
import { decodeError, unsupportedMediaType } from "./bind-error.js";
import type { RequestCodec, ResponseCodec } from "./codec.js";

function needsIdl(method: MethodDescriptor): never {
  throw unsupportedMediaType(
    `${method.path} is not bound to a .proto, so application/proto cannot carry its arguments; use application/json`,
  );
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

/** Encodes a result as the method's response message. */
export function encodeProtoMessage(method: MethodDescriptor, value: unknown): Buffer {
  const type = method.responseType ?? needsIdl(method);
  let v = (value ?? {}) as Record<string, unknown>;
  // A value that verifies is encoded as it is (no copy); otherwise fromObject converts what it
  // can (enum names, numeric strings, base64 bytes) and the result must verify.
  if (type.verify(v) !== null) {
    v = type.fromObject(v) as unknown as Record<string, unknown>;
    const err = type.verify(v);
    if (err) throw new TypeError(`the handler returned an invalid ${type.fullName.slice(1)}: ${err}`);
  }
  const bytes = type.encode(v).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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
