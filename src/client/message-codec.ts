import * as protobuf from "protobufjs";
import { parseJson, stringifyJson } from "../codec/json.js";
import { protojson } from "../codec/protojson-fast.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { ClientContentType } from "./options.js";
import { decodeResponseWrapper, encodeRequestWrapper } from "../protocol/grpc-wrapper.js";
import { javaTypeName } from "./arg-types.js";

/**
 * How one method's messages travel in one content type, seen from the client: requests are
 * encoded, responses decoded. Built once per method and content type.
 */
export interface MessageCodec {
  /** The Content-Type header value. */
  readonly contentType: string;
  /** Encodes the arguments of a unary or server-streaming call as one request message. */
  encodeArgs(args: readonly unknown[]): Uint8Array;
  /** Encodes one message of a request stream. */
  encodeMessage(value: unknown): Uint8Array;
  /** Decodes one response message. */
  decode(bytes: Uint8Array): unknown;
}

/** What IDL messages look like to callers: plain objects, 64-bit integers as strings, enums by name. */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

function localError(message: string, cause?: unknown): RpcError {
  // Nothing went on the wire: the caller passed something the method cannot carry.
  return new RpcError(Code.InvalidArgument, message, { cause });
}

function protoEncoder(type: protobuf.Type): (value: unknown) => Uint8Array {
  const name = type.fullName.slice(1);
  return (value) => {
    if (typeof value !== "object" || value === null) throw localError(`the request must be a ${name} object`);
    if (value instanceof type.ctor) return type.encode(value as protobuf.Message).finish();
    const err = type.verify(value as Record<string, unknown>);
    if (err) throw localError(`invalid ${name}: ${err}`);
    return type.encode(type.fromObject(value as Record<string, unknown>)).finish();
  };
}

function protoDecoder(type: protobuf.Type): (bytes: Uint8Array) => unknown {
  return (bytes) => {
    try {
      return type.toObject(type.decode(bytes), TO_OBJECT);
    } catch (e) {
      throw new RpcError(Code.Internal, `invalid ${type.fullName.slice(1)} response: ${(e as Error).message}`, { cause: e });
    }
  };
}

function protoJsonEncoder(type: protobuf.Type): (value: unknown) => Uint8Array {
  const toBytes = protoEncoder(type);
  return (value) => {
    // Going through the binary form validates and normalises the object the same way as proto does.
    const msg = type.decode(toBytes(value));
    return Buffer.from(JSON.stringify(protojson().toJson(type, msg)));
  };
}

function protoJsonDecoder(type: protobuf.Type): (bytes: Uint8Array) => unknown {
  return (bytes) => {
    try {
      const v = parseJson(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
      return type.toObject(protojson().fromJson(type, v, { ignoreUnknownFields: true }), TO_OBJECT);
    } catch (e) {
      throw new RpcError(Code.Internal, `invalid ${type.fullName.slice(1)} JSON response: ${(e as Error).message}`, { cause: e });
    }
  };
}

function utf8(value: unknown): Uint8Array {
  return Buffer.from(stringifyJson(value));
}

function jsonDecode(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return parseJson(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch (e) {
    throw new RpcError(Code.Internal, `invalid JSON response: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * The JSON form of an IDL-less call's arguments (decisions.md): a JSON array in parameter order;
 * a single bytes parameter goes bare, since an array there would read as the octets themselves.
 */
function jsonArgs(md: MethodDescriptor): (args: readonly unknown[]) => unknown {
  const single = md.params.length === 1 ? md.params[0].type.kind : undefined;
  if (single === "bytes" || single === "file") return (args) => args[0];
  return (args) => args;
}

function idlRequest(md: MethodDescriptor): protobuf.Type {
  return md.requestType as protobuf.Type;
}

function jsonCodec(md: MethodDescriptor, contentType: string): MessageCodec {
  if (md.requestType && md.responseType) {
    const enc = protoJsonEncoder(idlRequest(md));
    return { contentType, encodeArgs: (args) => enc(args[0]), encodeMessage: enc, decode: protoJsonDecoder(md.responseType) };
  }
  const shape = jsonArgs(md);
  return { contentType, encodeArgs: (args) => utf8(shape(args)), encodeMessage: utf8, decode: jsonDecode };
}

function wrapperCodec(md: MethodDescriptor, contentType: string): MessageCodec {
  const argTypes = md.params.map((p) => javaTypeName(p.type));
  return {
    contentType,
    encodeArgs: (args) => encodeRequestWrapper({ serializeType: "json", args: args.map(utf8), argTypes }),
    encodeMessage: (value) => encodeRequestWrapper({ serializeType: "json", args: [utf8(value)], argTypes }),
    decode(bytes) {
      let w: ReturnType<typeof decodeResponseWrapper>;
      try {
        w = decodeResponseWrapper(bytes);
      } catch (e) {
        throw new RpcError(Code.Internal, `invalid TripleResponseWrapper: ${(e as Error).message}`, { cause: e });
      }
      if (w.serializeType && w.serializeType !== "json") {
        throw new RpcError(Code.Internal, `unsupported serializeType "${w.serializeType}" in the response`);
      }
      return jsonDecode(w.data);
    },
  };
}

/**
 * The codec of one method in one content type. IDL methods use their messages (ProtoJSON for
 * the JSON types); IDL-less methods use JSON, wrapped in TripleRequestWrapper under grpc+proto;
 * `proto` on an IDL-less method falls back to JSON, the only body such a method can take.
 */
export function messageCodec(md: MethodDescriptor, kind: ClientContentType): MessageCodec {
  const idl = md.requestType !== undefined && md.responseType !== undefined;
  switch (kind) {
    case "json":
      return jsonCodec(md, "application/json");
    case "grpc+json":
      return jsonCodec(md, "application/grpc+json");
    case "proto":
    case "grpc+proto": {
      const contentType = kind === "proto" ? "application/proto" : "application/grpc+proto";
      if (!idl) return kind === "proto" ? jsonCodec(md, "application/json") : wrapperCodec(md, contentType);
      const enc = protoEncoder(idlRequest(md));
      return { contentType, encodeArgs: (args) => enc(args[0]), encodeMessage: enc, decode: protoDecoder(md.responseType!) };
    }
  }
}
