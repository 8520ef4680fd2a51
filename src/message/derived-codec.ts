// Owns `derivedCodec`, `isDubboWrapper`, `derivedProtoJsonTest`, `classStreamReply`, … Plain
// protobuf for an IDL-less method: the messages of the schema derived from its class
// (docs/schema.md), both ways, with `Date`, `bigint`, `Map`, bytes and untyped … Must not change:
// gRPC's wire rules (5-byte message prefix, grpc-status in trailers) that grpc-js and other peers
// rely on.
import { latin1Decode, utf8Decode, utf8Encode } from "../protocol/bytes.js";
import type * as protobuf from "protobufjs";
import { resultMismatch } from "../protocol/errors.js";
import { bindError } from "../codec/bind-error.js";
import { asBuffer } from "../codec/bytes.js";
import { protojson } from "../codec/protojson-fast.js";
import { paramLabel } from "../codec/binder.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { fromProto, type FromProto, hasPresence, toProto, type ToProto } from "../schema/convert.js";
import { type DerivedMethod, ProtoSchemaBuilder } from "../schema/derive.js";
import { jsonDefaults, jsonPresence } from "./json-presence.js";
import { toProtobufRoot } from "../schema/protobufjs.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import type { MessageCodec } from "./codec-types.js";

const ANY: TypeDesc = { kind: "any" };

function undecodable(what: string, e: unknown): RpcError {
  return new RpcError(Code.Internal, `cannot decode the request message (${what}): ${(e as Error).message}`, { cause: e });
}

function badResponse(what: string, e: unknown): RpcError {
  return new RpcError(Code.Internal, `invalid ${what} response: ${(e as Error).message}`, { cause: e });
}

/** The derived messages of one method on their own (field numbers do not depend on the rest of the server). */
function deriveMethod(md: MethodDescriptor): { dm: DerivedMethod; root: protobuf.Root } {
  const b = new ProtoSchemaBuilder().add({ name: md.serviceName, version: "", group: "", methods: [md], proto: undefined });
  const schema = b.build();
  return { dm: schema.methods.get(md)!, root: toProtobufRoot(schema.files) };
}

interface ParamSlot {
  readonly field: string;
  readonly label: string;
  readonly optional: boolean;
  /** Message-typed parameters have presence: absent and required is a 400. */
  readonly presence: boolean;
  readonly from: FromProto;
  readonly to: ToProto;
}

function paramSlots(md: MethodDescriptor, dm: DerivedMethod): ParamSlot[] {
  return md.params.map((p, i) => ({
    field: dm.paramFields[i],
    label: paramLabel(p, i),
    optional: p.optional,
    presence: hasPresence(p.type),
    from: fromProto(p.type),
    to: toProto(p.type),
  }));
}

/** Server: a decoded request message → the method's arguments. */
function argsFrom(slots: readonly ParamSlot[], msg: Record<string, unknown>): unknown[] {
  const out = new Array(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i];
    const v = msg[s.field];
    if (v === null || v === undefined) {
      if (s.presence && !s.optional) throw bindError(`${s.label} is missing`);
      if (s.optional || s.presence) continue;
    }
    out[i] = s.from(v, s.label);
  }
  return out;
}

/** Client: the method's arguments → a request message object. */
function argsTo(slots: readonly ParamSlot[], args: readonly unknown[]): Record<string, unknown> {
  const msg: Record<string, unknown> = {};
  for (let i = 0; i < slots.length; i++) {
    const v = args[i];
    if (v !== undefined && v !== null) msg[slots[i].field] = slots[i].to(v);
  }
  return msg;
}

function encodeWith(type: protobuf.Type, obj: unknown): Buffer {
  return asBuffer(type.encode(type.fromObject(obj as Record<string, unknown>)).finish());
}

/**
 * Plain protobuf for an IDL-less method: the messages of the schema derived from its class
 * (docs/schema.md), both ways, with `Date`, `bigint`, `Map`, bytes and untyped values converted
 * to and from their protobuf forms. What a standard gRPC client sends and expects.
 */
export function derivedCodec(md: MethodDescriptor): MessageCodec {
  const { dm, root } = deriveMethod(md);
  const req = root.lookupType(dm.request);
  const res = root.lookupType(dm.response);
  const slots = paramSlots(md, dm);
  const element = md.params[0]?.type ?? ANY;
  const result = md.returns ?? ANY;
  const reqFrom = fromProto(element);
  // Named as Triple HTTP names it, so a missing field reads the same on every protocol.
  const reqLabel = md.params[0] ? paramLabel(md.params[0], 0) : "the request message";
  const reqTo = toProto(element);
  const resFrom = fromProto(result);
  const resTo = toProto(result);
  const decodeReq = (bytes: Uint8Array): Record<string, unknown> => {
    try {
      return req.decode(bytes) as unknown as Record<string, unknown>;
    } catch (e) {
      throw undecodable(dm.request, e);
    }
  };
  const wrapReq = (v: unknown): unknown => (dm.requestShape === "class" ? reqTo(v) : { [dm.requestField]: reqTo(v) });
  const wrapRes = (v: unknown): unknown => (v === undefined || v === null ? {} : dm.responseShape === "class" ? resTo(v) : { value: resTo(v) });
  return {
    decodeRequest(bytes) {
      const msg = decodeReq(bytes);
      if (dm.requestShape === "params") return argsFrom(slots, msg);
      return [reqFrom(dm.requestShape === "class" ? msg : msg[dm.requestField], reqLabel)];
    },
    encodeResponse: (value) => encodeWith(res, wrapRes(value)),
    encodeArgs: (args) => encodeWith(req, argsTo(slots, args)),
    encodeRequest: (value) => encodeWith(req, wrapReq(value)),
    decodeResponse(bytes) {
      let msg: Record<string, unknown>;
      try {
        msg = res.decode(bytes) as unknown as Record<string, unknown>;
      } catch (e) {
        throw badResponse(dm.response, e);
      }
      try {
        return resFrom(dm.responseShape === "class" ? msg : msg.value, "the result");
      } catch (e) {
        throw resultMismatch(md.path, e);
      }
    },
  };
}

/** Serialization names Dubbo clients write in a TripleRequestWrapper's `serializeType`. */
const DUBBO_SERIALIZATIONS = new Set([
  "hessian4",
  "hessian2",
  "fastjson2",
  "fastjson",
  "json",
  "protobuf",
  "protostuff",
  "gson",
  "msgpack",
  "kryo",
  "fst",
  "fury",
  "avro",
  "java",
  "nativejava",
  "compactedjava",
]);

/** Reads a varint at `pos`; [value, next position], or undefined past the end. */
function varint(b: Uint8Array, pos: number): [number, number] | undefined {
  let v = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (pos >= b.length) return undefined;
    const byte = b[pos++];
    v += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [v, pos];
  }
  return undefined;
}

/**
 * Tells Dubbo's TripleRequestWrapper from a plain protobuf request by the bytes, since neither
 * the content type nor the headers can: Dubbo Java and dubbo-go send `application/grpc+proto`
 * for both, and so do connect-es and dubbo-js for plain messages. A wrapper is a message whose
 * fields are only 1, 2 and 3, all length-delimited; field 1 (`serializeType`) comes first,
 * exactly once, and names a Dubbo serialization (`hessian2`, `fastjson2`, `json` …); there are
 * between `least` (the parameters up to the last required one) and `n` arguments (field 2), and
 * at most `n + 1` argument types (field 3; Java's server streams name their StreamObserver too). Anything else is plain protobuf. What it cannot tell: a
 * plain request whose first field is a string equal to a serialization name and whose fields 2
 * and 3 are repeated strings or bytes of those counts.
 */
export function isDubboWrapper(bytes: Uint8Array, n: number, least: number): boolean {
  let pos = 0;
  let args = 0;
  let types = 0;
  let first = true;
  while (pos < bytes.length) {
    const tag = varint(bytes, pos);
    if (!tag || (tag[0] & 7) !== 2) return false;
    const field = tag[0] >>> 3;
    const len = varint(bytes, tag[1]);
    if (!len || len[1] + len[0] > bytes.length) return false;
    if (first) {
      if (field !== 1) return false;
      const name = latin1Decode(bytes.subarray(len[1], len[1] + len[0]));
      if (!DUBBO_SERIALIZATIONS.has(name)) return false;
      first = false;
    } else if (field === 2) args++;
    else if (field === 3) types++;
    else return false;
    pos = len[1] + len[0];
  }
  // Dubbo Java's server-streaming calls name the StreamObserver parameter too: one type more.
  return !first && args >= least && args <= n && types <= n + 1;
}

function parseJsonBytes(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(utf8Decode(bytes));
  } catch (e) {
    throw new RpcError(Code.InvalidArgument, `invalid ${what} JSON: ${(e as Error).message}`, { cause: e });
  }
}

/** A JSON value → the binary form of `type`, by the ProtoJSON mapping. */
function jsonToBinary(type: protobuf.Type, v: unknown, what: string): Uint8Array {
  try {
    return type.encode(protojson().fromJson(type, v, { ignoreUnknownFields: true })).finish();
  } catch (e) {
    throw new RpcError(Code.InvalidArgument, `invalid ${what}: ${(e as Error).message}`, { cause: e });
  }
}

/** The binary form of `type` → its ProtoJSON text. */
function binaryToJson(type: protobuf.Type, bytes: Uint8Array, fill?: (json: unknown, args: readonly unknown[]) => void, args?: readonly unknown[]): Buffer {
  const json = protojson().toJson(type, type.decode(bytes));
  if (fill && args) fill(json, args);
  return utf8Encode(JSON.stringify(json)) as Buffer;
}

/**
 * True when a parsed JSON request is ProtoJSON of a derived request message rather than Triple's
 * or Dubbo's form: a JSON object that is empty or names at least one of the message's fields
 * (by name or JSON name). Arrays, bare values and objects naming none of them are the other form.
 */
function namesAField(req: protobuf.Type): (v: unknown) => boolean {
  const fieldNames = new Set(req.fieldsArray.flatMap((f) => [f.name, f.jsonName ?? f.name]));
  return (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
    const keys = Object.keys(v);
    return keys.length === 0 || keys.some((k) => fieldNames.has(k));
  };
}

/**
 * For `application/grpc+json` on an IDL-less method: whether a first request message (parsed
 * JSON) is ProtoJSON of the derived request message. One rule for every call kind: a stream of
 * decorated-class elements, whose message is the class, is read as ProtoJSON too (`{"count":"5"}`
 * for an int64, as connect-es sends it; a plain number is ProtoJSON as well), and answered so.
 */
export function derivedProtoJsonTest(md: MethodDescriptor): (v: unknown) => boolean {
  const { dm, root } = deriveMethod(md);
  return namesAField(root.lookupType(dm.request));
}

/**
 * Client: a reply of an IDL-less stream of decorated-class elements over `grpc+json`: ProtoJSON of
 * the derived response (what our servers answer since that form is read as ProtoJSON), or the
 * bare result an older server of ours answers; undefined for other methods.
 */
export function classStreamReply(md: MethodDescriptor, plain: (bytes: Uint8Array) => unknown): ((bytes: Uint8Array) => unknown) | undefined {
  const p = md.params[0];
  if ((md.kind !== "client_streaming" && md.kind !== "bidi_streaming") || p?.type.kind !== "class") return undefined;
  const { dm } = deriveMethod(md);
  const proto = derivedJsonCodec(md, () => []);
  if (dm.responseShape === "class") return (bytes) => proto.decodeResponse(bytes);
  return (bytes) => {
    const v = bytes.length === 0 ? undefined : parseJsonBytes(bytes, dm.response);
    const wrapped = typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).every((k) => k === "value");
    return wrapped ? proto.decodeResponse(bytes) : plain(bytes);
  };
}

/**
 * ProtoJSON of the derived messages for an IDL-less method: what Connect and gRPC-Web clients
 * built from the exported schema send and expect in JSON (`{"a": 2, "b": 3}` in,
 * `{"value": 5}` out). Requests in Triple HTTP's form (a JSON array of the arguments) are read
 * too. Values pass through the binary form, so the type rules are the derived codec's.
 */
export function derivedJsonCodec(md: MethodDescriptor, arrays: (value: unknown) => unknown[]): MessageCodec {
  const bin = derivedCodec(md);
  const { dm, root } = deriveMethod(md);
  const req = root.lookupType(dm.request);
  const res = root.lookupType(dm.response);
  // A request in Triple HTTP's form (an array of the arguments, a bare value, a bare object
  // naming none of the message's fields) goes through the Triple binder.
  const protoJson = namesAField(req);
  const tripleForm = (v: unknown): boolean => dm.requestShape === "params" && !protoJson(v);
  const present = jsonPresence(md, dm, req);
  const fill = jsonDefaults(md, dm, req);
  return {
    decodeRequest(bytes) {
      if (bytes.length === 0) return bin.decodeRequest(bytes);
      const v = parseJsonBytes(bytes, dm.request);
      if (tripleForm(v)) return arrays(v);
      present?.(v);
      return bin.decodeRequest(jsonToBinary(req, v, dm.request));
    },
    encodeResponse: (value) => binaryToJson(res, bin.encodeResponse(value)),
    encodeArgs: (args) => binaryToJson(req, bin.encodeArgs(args), fill, args),
    encodeRequest: (value) => binaryToJson(req, bin.encodeRequest(value), fill, fill && [value]),
    decodeResponse: (bytes) => bin.decodeResponse(bytes.length === 0 ? bytes : jsonToBinary(res, parseJsonBytes(bytes, dm.response), dm.response)),
  };
}
