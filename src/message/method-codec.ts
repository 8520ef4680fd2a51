// Owns `messageCodec`: the codec of one method in one format, for Node.js and the web client alike.
// Dubbo's Java serializations come in through `useJavaSerializations` (message-codec.ts registers
// them), so this module has no `require`. Must not change: gRPC's wire rules (5-byte message
// prefix, grpc-status in trailers) that grpc-js and other peers rely on.
import { utf8Encode } from "../protocol/bytes.js";
import * as protobuf from "protobufjs";
import { bindError } from "../codec/bind-error.js";
import { paramConverters, paramLabel } from "../codec/binder.js";
import { decodeUtf8 } from "../codec/bytes.js";
import { bindJsonValue, encodeJsonValue, protoFromJsonValue } from "../codec/json-codec.js";
import { parseJson, stringifyJson } from "../codec/json.js";
import { jsonBytes, jsonClientCodec, resultDecoder } from "../codec/json-message.js";
import { encodeProtoFrame, encodeProtoMessage } from "../codec/proto-codec.js";
import { fastFromJson, fastToJson, protojson } from "../codec/protojson-fast.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { GrpcMessageFormat } from "./codec-types.js";

export type { MessageCodec } from "./codec-types.js";
import type { MessageCodec } from "./codec-types.js";
import { classStreamReply, derivedCodec, derivedJsonCodec, derivedProtoJsonTest, isDubboWrapper } from "./derived-codec.js";
import { javaTypeName } from "../serialization/java-types.js";
import type * as JavaCodec from "./java-wrapper-codec.js";
import type * as JavaSer from "./java-serialization.js";
import { quote } from "../protocol/wire-text.js";
import { decodeRequestWrapper, decodeResponseWrapper, encodeRequestWrapper, encodeResponseWrapper, wrapperSerializeType } from "./wrapper.js";

/** Dubbo's Java serializations (hessian2, fastjson2), as `useJavaSerializations` takes them. */
export type JavaSerializations = typeof JavaCodec & typeof JavaSer;

let javaLoader: (() => JavaSerializations) | undefined;

/**
 * Where the Java serializations come from: Node.js's message-codec.ts registers a loader that
 * requires them on the first wrapper that uses one. The web client registers none (it sends no
 * hessian2 or fastjson2), so its bundle does not carry them.
 */
export function useJavaSerializations(load: () => JavaSerializations): void {
  let loaded: JavaSerializations | undefined;
  javaLoader = () => (loaded ??= load());
}

function javaCodec(): JavaSerializations {
  if (javaLoader === undefined) {
    throw new RpcError(Code.Unimplemented, "Dubbo's Java serializations (hessian2, fastjson2) are not loaded: use triple-rpc from Node.js");
  }
  return javaLoader();
}

/** Bytes that are not a message at all: gRPC answers `internal`, as grpc-go and grpc-js do. */
function undecodable(what: string, e: unknown): RpcError {
  return new RpcError(Code.Internal, `cannot decode the request message (${what}): ${(e as Error).message}`, {
    cause: e,
  });
}

/** A response the client cannot read. */
function badResponse(what: string, e: unknown): RpcError {
  return new RpcError(Code.Internal, `invalid ${what} response: ${(e as Error).message}`, { cause: e });
}

/** Something the caller passed that the method cannot carry: nothing went on the wire. */
function badRequestValue(message: string): RpcError {
  return new RpcError(Code.InvalidArgument, message);
}

function parseJsonMessage(b: Uint8Array, what: string): unknown {
  try {
    return parseJson(decodeUtf8(b));
  } catch (e) {
    throw undecodable(what, e);
  }
}

/** What IDL messages look like to callers: plain objects, 64-bit integers as strings, enums by name. */
const TO_OBJECT: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

/** Client: a plain object (or message instance) → the encoded message, verified first. */
function protoEncoder(type: protobuf.Type): (value: unknown) => Uint8Array {
  const name = type.fullName.slice(1);
  return (value) => {
    if (typeof value !== "object" || value === null) throw badRequestValue(`the request must be a ${name} object`);
    if (value instanceof type.ctor) return type.encode(value as protobuf.Message).finish();
    const err = type.verify(value as Record<string, unknown>);
    if (err) throw badRequestValue(`invalid ${name}: ${err}`);
    return type.encode(type.fromObject(value as Record<string, unknown>)).finish();
  };
}

function protoCodec(md: MethodDescriptor): MessageCodec {
  const req = md.requestType!;
  const res = md.responseType!;
  const reqName = req.fullName.slice(1);
  const encode = protoEncoder(req);
  return {
    decodeRequest(bytes) {
      try {
        return [req.decode(bytes)];
      } catch (e) {
        throw undecodable(reqName, e);
      }
    },
    encodeResponse: (value) => encodeProtoMessage(md, value),
    encodeResponseFrame: (value) => encodeProtoFrame(md, value),
    encodeArgs: (args) => encode(args[0]),
    encodeRequest: encode,
    decodeResponse(bytes) {
      try {
        return res.toObject(res.decode(bytes), TO_OBJECT);
      } catch (e) {
        throw badResponse(res.fullName.slice(1), e);
      }
    },
  };
}

/**
 * How to read a JSON answer for a response message of one field named `value` (how the derived
 * schema carries a result), given that a derived method answers Triple HTTP JSON with its bare
 * result (docs/schema.md): undefined for other messages; else a test of whether an answer is the
 * bare result. Every non-object is. An object is only where the field takes one (a map, or
 * `google.protobuf.Value`/`Struct`: any JSON) and it is not the message's own ProtoJSON (`{}` or
 * `{"value": …}` alone).
 */
function bareResultTest(type: protobuf.Type): ((v: unknown) => boolean) | undefined {
  const fields = type.fieldsArray;
  if (fields.length !== 1 || fields[0].name !== "value") return undefined;
  const f = fields[0];
  const message = f.resolve().resolvedType?.fullName;
  const takesObject = f.map || message === ".google.protobuf.Value" || message === ".google.protobuf.Struct";
  return (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return true;
    if (!takesObject) return false;
    const keys = Object.keys(v);
    return keys.length > 0 && !(keys.length === 1 && keys[0] === "value");
  };
}

/**
 * Client half of JSON for IDL methods: ProtoJSON. Simple messages (scalar fields only) go through
 * the compiled field tables of `protojson-fast`; anything else is validated through the binary
 * form and converted by protobufjs's protojson.
 */
function protoJsonClient(md: MethodDescriptor): Pick<MessageCodec, "encodeArgs" | "encodeRequest" | "decodeResponse"> {
  const req = md.requestType!;
  const res = md.responseType!;
  const toBytes = protoEncoder(req);
  const slow = (value: unknown) => utf8Encode(JSON.stringify(protojson().toJson(req, req.decode(toBytes(value)))));
  const isBare = bareResultTest(res);
  const encode = (value: unknown): Uint8Array => {
    if (typeof value === "object" && value !== null && !(value instanceof req.ctor) && req.verify(value as Record<string, unknown>) === null) {
      const fast = fastToJson(req, value);
      if (fast) return utf8Encode(JSON.stringify(fast));
    }
    return slow(value);
  };
  return {
    encodeArgs: (args) => encode(args[0]),
    encodeRequest: encode,
    decodeResponse(bytes) {
      try {
        let v = parseJson(decodeUtf8(bytes));
        // A derived method answers Triple HTTP JSON with its bare result (Dubbo's form), which the
        // exported .proto wraps in a message whose one field is `value` (docs/schema.md).
        if (isBare?.(v)) v = { value: v };
        const plain = typeof v === "object" && v !== null && !Array.isArray(v);
        const msg = (plain && fastFromJson(res, v as Record<string, unknown>)) || protojson().fromJson(res, v, { ignoreUnknownFields: true });
        return res.toObject(msg, TO_OBJECT);
      } catch (e) {
        throw badResponse(`${res.fullName.slice(1)} JSON`, e);
      }
    },
  };
}

function jsonCodec(md: MethodDescriptor): MessageCodec {
  const client = md.requestType && md.responseType ? protoJsonClient(md) : jsonClientCodec(md);
  return {
    decodeRequest(bytes) {
      // An empty message is the empty request: no arguments, or an IDL message with defaults.
      if (bytes.length === 0) {
        if (md.params.length === 0) return [];
        if (md.requestType) return [protoFromJsonValue(md, {})];
      }
      return bindJsonValue(md, parseJsonMessage(bytes, "JSON"));
    },
    encodeResponse: (value) => Buffer.from(encodeJsonValue(md, value), "utf8"),
    encodeResponseText: (value) => encodeJsonValue(md, value),
    ...client,
  };
}

/**
 * serializeType values whose args are UTF-8 JSON; an empty serializeType means json too.
 * (`fastjson2` is not: Dubbo's fastjson2 is binary JSONB, read only for IDL-less methods.)
 */
const JSON_SERIALIZATIONS = new Set(["", "json", "fastjson"]);

/** Server: the arguments inside a TripleRequestWrapper, one JSON (or protobuf) value each. */
function unwrapArgs(md: MethodDescriptor): (bytes: Uint8Array) => unknown[] {
  const n = md.params.length;
  const convs = paramConverters(md.params);
  const labels = md.params.map((p, i) => paramLabel(p, i));
  // Trailing optional parameters may be left out (an older Dubbo client, say).
  const least = requiredCount(md);
  return (bytes) => {
    let w: ReturnType<typeof decodeRequestWrapper>;
    try {
      w = decodeRequestWrapper(bytes);
    } catch (e) {
      throw undecodable("TripleRequestWrapper", e);
    }
    const st = w.serializeType.toLowerCase();
    const proto = md.requestType !== undefined && st === "protobuf";
    if (!proto && !JSON_SERIALIZATIONS.has(st)) {
      throw new RpcError(
        Code.Unimplemented,
        md.requestType
          ? `unsupported serializeType ${quote(w.serializeType)} in TripleRequestWrapper: a .proto method reads json and protobuf wrappers`
          : `unsupported serializeType ${quote(w.serializeType)} in TripleRequestWrapper: this server reads json, hessian2 (hessian4) and fastjson2`,
      );
    }
    if (w.args.length > n || w.args.length < least) {
      throw bindError(`expected ${n} argument${n === 1 ? "" : "s"} in the TripleRequestWrapper, got ${w.args.length}`);
    }
    if (md.requestType) return [unwrapIdlArg(md, md.requestType, w.args[0], proto)];
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = i < w.args.length ? convs[i](parseJsonMessage(w.args[i], `JSON ${labels[i]}`), labels[i]) : undefined;
    }
    return out;
  };
}

/** How many leading arguments a positional form must carry: up to the last required parameter. */
function requiredCount(md: MethodDescriptor): number {
  let k = md.params.length;
  while (k > 0 && md.params[k - 1].optional) k--;
  return k;
}

function unwrapIdlArg(md: MethodDescriptor, type: protobuf.Type, arg: Uint8Array, proto: boolean): unknown {
  if (!proto) return protoFromJsonValue(md, arg.length === 0 ? {} : parseJsonMessage(arg, "JSON argument"));
  try {
    return type.decode(arg);
  } catch (e) {
    throw undecodable(type.fullName.slice(1), e);
  }
}

/**
 * The wrapper codec for a call, by its first message's `serializeType`: hessian2 and fastjson2
 * (Dubbo Java's) or JSON; one codec per method and serializeType, so the reply echoes it.
 */
function wrapperFor(md: MethodDescriptor, json: () => MessageCodec): (first: Uint8Array) => MessageCodec {
  const byType = new Map<string, MessageCodec>();
  return (first) => {
    if (md.requestType) return json();
    const st = wrapperSerializeType(first);
    const hit = byType.get(st);
    if (hit) return hit;
    const j = javaCodec();
    const ser = j.javaSerialization(st);
    if (!ser) return json();
    const c = j.javaWrapperCodec(md, ser, st);
    byType.set(st, c);
    return c;
  };
}

function wrapperCodec(md: MethodDescriptor): MessageCodec {
  const json = jsonWrapperCodec(md);
  return { ...json, forRequest: wrapperFor(md, () => json) };
}

function jsonWrapperCodec(md: MethodDescriptor): MessageCodec {
  const argTypes = md.params.map((p) => javaTypeName(p.type, p.optional));
  const decodeResult = resultDecoder(md);
  return {
    decodeRequest: unwrapArgs(md),
    encodeResponse(value) {
      const json = md.responseType ? encodeJsonValue(md, value) : stringifyJson(value);
      return encodeResponseWrapper({ serializeType: "json", data: Buffer.from(json, "utf8"), type: "" });
    },
    encodeArgs: (args) => encodeRequestWrapper({ serializeType: "json", args: args.map(jsonBytes), argTypes }),
    encodeRequest: (value) => encodeRequestWrapper({ serializeType: "json", args: [jsonBytes(value)], argTypes }),
    decodeResponse(bytes) {
      let w: ReturnType<typeof decodeResponseWrapper>;
      try {
        w = decodeResponseWrapper(bytes);
      } catch (e) {
        throw badResponse("TripleResponseWrapper", e);
      }
      if (w.serializeType && w.serializeType !== "json") {
        throw new RpcError(Code.Internal, `unsupported serializeType "${w.serializeType}" in the response`);
      }
      return decodeResult(w.data);
    },
  };
}

/**
 * `application/grpc` and `+proto` on an IDL-less method: plain protobuf of the derived schema
 * (what standard gRPC clients send; what our client sends) unless the first message is Dubbo's
 * TripleRequestWrapper (what Dubbo Java and dubbo-go send), told apart by its bytes.
 */
function idlLessProtoCodec(md: MethodDescriptor): MessageCodec {
  const plain = derivedCodec(md);
  let json: MessageCodec | undefined;
  const wrapped = wrapperFor(md, () => (json ??= jsonWrapperCodec(md)));
  const n = md.params.length;
  const least = requiredCount(md);
  return {
    ...plain,
    forRequest: (first) => (isDubboWrapper(first, n, least) ? wrapped(first) : plain),
  };
}

/**
 * `application/grpc+json` on an IDL-less method: two JSON forms, told apart by the first request
 * message, whose form the whole call follows, its reply included. A JSON object keyed by the
 * derived request message's fields (or `{}`) is ProtoJSON of the schema reflection and `toProto`
 * advertise (`{"name": "x"}` in, `{"value": "hi x"}` out): what connect-es's gRPC-JSON transport
 * sends. Anything else (an array of the arguments, a bare value, an object naming none of the
 * fields) is Dubbo's plain JSON, answered with the bare result. Only a message starting with `{`
 * is parsed to decide; arrays and bare values cost one byte test.
 */
function idlLessJsonCodec(md: MethodDescriptor): MessageCodec {
  const dubbo = jsonCodec(md);
  const reply = classStreamReply(md, dubbo.decodeResponse);
  if (reply) dubbo.decodeResponse = reply;
  let isProtoJson: ((v: unknown) => boolean) | undefined;
  let protoJson: MessageCodec | undefined;
  const pick = (first: Uint8Array): MessageCodec => {
    if (firstNonSpace(first) !== 0x7b /* { */) return dubbo;
    let v: unknown;
    try {
      v = parseJson(decodeUtf8(first));
    } catch {
      return dubbo; // its decoder says what is wrong
    }
    isProtoJson ??= derivedProtoJsonTest(md);
    return isProtoJson(v) ? (protoJson ??= derivedJsonCodec(md, (x) => bindJsonValue(md, x))) : dubbo;
  };
  return { ...dubbo, forRequest: pick };
}

function firstNonSpace(b: Uint8Array): number | undefined {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
  }
  return undefined;
}

const cache = new WeakMap<MethodDescriptor, Partial<Record<GrpcMessageFormat, MessageCodec>>>();

/**
 * The codec of one method in one format. `proto` carries the method's protobuf messages: its
 * .proto's, or for an IDL-less method those of the schema derived from its class, or Dubbo's
 * wrapper when that is what the first message is; `wrapper` is always Dubbo's wrapper.
 */
export function messageCodec(md: MethodDescriptor, format: GrpcMessageFormat): MessageCodec {
  let byFormat = cache.get(md);
  if (!byFormat) cache.set(md, (byFormat = {}));
  let c = byFormat[format];
  if (!c) byFormat[format] = c = buildCodec(md, format);
  return c;
}

function buildCodec(md: MethodDescriptor, format: GrpcMessageFormat): MessageCodec {
  const idl = md.requestType !== undefined && md.responseType !== undefined;
  switch (format) {
    case "json":
      return idl ? jsonCodec(md) : idlLessJsonCodec(md);
    case "protojson":
      return idl ? jsonCodec(md) : derivedJsonCodec(md, (v) => bindJsonValue(md, v));
    case "wrapper":
      return wrapperCodec(md);
    case "hessian2":
    case "fastjson2": {
      const j = javaCodec();
      j.checkMethodJavaTypes(md);
      return j.javaWrapperCodec(md, j.javaSerialization(format)!);
    }
    default:
      return idl ? protoCodec(md) : idlLessProtoCodec(md);
  }
}
