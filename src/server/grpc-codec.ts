import { bindError } from "../codec/bind-error.js";
import { compileConverter, paramLabel } from "../codec/binder.js";
import { bindJsonValue, encodeJsonValue, protoFromJsonValue } from "../codec/json-codec.js";
import { parseJson, stringifyJson } from "../codec/json.js";
import { encodeProtoFrame, encodeProtoMessage } from "../codec/proto-codec.js";
import { Code } from "../protocol/code.js";
import { decodeRequestWrapper, encodeResponseWrapper } from "../protocol/grpc-wrapper.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";

/** How the messages of one gRPC call are encoded, chosen by the request's content type. */
export type GrpcMessageFormat = "proto" | "json" | "wrapper";

/**
 * Encodes and decodes the messages of one method in one format. Built once per method and
 * format, then reused by every call.
 */
export interface GrpcMessageCodec {
  /** Decodes one request message into the method's bound arguments (streams: one element). */
  decode(bytes: Buffer): unknown[];
  /** Encodes one response message. */
  encode(value: unknown): Buffer;
  /** Encodes one response message as a whole uncompressed frame, where that saves a copy. */
  encodeFrame?(value: unknown): Buffer;
}

/** Content types of gRPC calls → message format (decisions.md). */
const FORMATS: ReadonlyMap<string, GrpcMessageFormat> = new Map([
  ["application/grpc", "proto"],
  ["application/grpc+proto", "proto"],
  ["application/grpc+json", "json"],
  ["application/triple+wrapper", "wrapper"],
]);

/** The message format of a (lower-case, parameter-free) gRPC media type; undefined when unsupported. */
export function grpcFormatOf(mediaType: string): GrpcMessageFormat | undefined {
  return FORMATS.get(mediaType);
}

/** The gRPC media types we accept, for error messages. */
export const GRPC_MEDIA_TYPES: readonly string[] = [...FORMATS.keys()];

/** Bytes that are not a message at all: gRPC answers `internal`, as grpc-go and grpc-js do. */
function undecodable(what: string, e: unknown): RpcError {
  return new RpcError(Code.Internal, `cannot decode the request message (${what}): ${(e as Error).message}`, {
    cause: e,
  });
}

function utf8(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8");
}

function parseJsonMessage(b: Uint8Array, what: string): unknown {
  try {
    return parseJson(utf8(b));
  } catch (e) {
    throw undecodable(what, e);
  }
}

function protoCodec(md: MethodDescriptor): GrpcMessageCodec {
  const type = md.requestType!;
  const name = type.fullName.slice(1);
  return {
    decode(bytes) {
      try {
        return [type.decode(bytes)];
      } catch (e) {
        throw undecodable(name, e);
      }
    },
    encode: (value) => encodeProtoMessage(md, value),
    encodeFrame: (value) => encodeProtoFrame(md, value),
  };
}

function jsonCodec(md: MethodDescriptor): GrpcMessageCodec {
  return {
    decode(bytes) {
      // An empty message is the empty request: no arguments, or an IDL message with defaults.
      if (bytes.length === 0) {
        if (md.params.length === 0) return [];
        if (md.requestType) return [protoFromJsonValue(md, {})];
      }
      return bindJsonValue(md, parseJsonMessage(bytes, "JSON"));
    },
    encode: (value) => Buffer.from(encodeJsonValue(md, value), "utf8"),
  };
}

/** serializeType values whose args are UTF-8 JSON; an empty serializeType means json too. */
const JSON_SERIALIZATIONS = new Set(["", "json", "fastjson"]);

function wrapperCodec(md: MethodDescriptor): GrpcMessageCodec {
  const n = md.params.length;
  const convs = md.params.map((p) => compileConverter(p.type));
  const labels = md.params.map((p, i) => paramLabel(p, i));
  return {
    decode(bytes) {
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
          `unsupported serializeType "${w.serializeType}" in TripleRequestWrapper: this server reads json`,
        );
      }
      if (w.args.length !== n) {
        throw bindError(`expected ${n} argument${n === 1 ? "" : "s"} in the TripleRequestWrapper, got ${w.args.length}`);
      }
      if (md.requestType) {
        const arg = w.args[0];
        if (proto) {
          try {
            return [md.requestType.decode(arg)];
          } catch (e) {
            throw undecodable(md.requestType.fullName.slice(1), e);
          }
        }
        return [protoFromJsonValue(md, arg.length === 0 ? {} : parseJsonMessage(arg, "JSON argument"))];
      }
      const out = new Array(n);
      for (let i = 0; i < n; i++) out[i] = convs[i](parseJsonMessage(w.args[i], `JSON ${labels[i]}`), labels[i]);
      return out;
    },
    encode(value) {
      const json = md.responseType ? encodeJsonValue(md, value) : stringifyJson(value);
      return encodeResponseWrapper({ serializeType: "json", data: Buffer.from(json, "utf8"), type: "" });
    },
  };
}

const cache = new WeakMap<MethodDescriptor, Partial<Record<GrpcMessageFormat, GrpcMessageCodec>>>();

/**
 * The codec for one method and format. `application/grpc` and `+proto` carry protobuf for .proto
 * methods and the Triple wrapper for IDL-less ones (as Dubbo Java's client sends them).
 */
export function grpcCodecFor(md: MethodDescriptor, format: GrpcMessageFormat): GrpcMessageCodec {
  let byFormat = cache.get(md);
  if (!byFormat) cache.set(md, (byFormat = {}));
  let c = byFormat[format];
  if (!c) {
    c =
      format === "json"
        ? jsonCodec(md)
        : format === "proto" && md.requestType
          ? protoCodec(md)
          : wrapperCodec(md);
    byFormat[format] = c;
  }
  return c;
}
