// Owns `protoFromJsonValue`, `bindJsonValue`, `encodeJsonValue`, `jsonRequestCodec`, … Decodes one
// protobuf message from an already-parsed ProtoJSON value (original or lowerCamelCase names). Must
// not change: limits are checked before memory is spent; bad input is a 4xx naming the problem.
import type { MethodDescriptor } from "../service/descriptors.js";
import { bindError, decodeError } from "./bind-error.js";
import { withNumberLimits } from "./big-numbers.js";
import { compileJsonBinder } from "./binder.js";
import { bindAll } from "./validation.js";
import type { RequestCodec, ResponseCodec } from "./codec.js";
import { parseJson, stringifyJson } from "./json.js";
import { fastFromJson, fastToJson, protojson } from "./protojson-fast.js";

const binders = new WeakMap<MethodDescriptor, (body: unknown) => unknown[]>();

function utf8(body: Buffer): string {
  // A UTF-8 BOM is legal at the start of JSON text from some clients.
  return body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.toString("utf8", 3) : body.toString("utf8");
}

/** Decodes one protobuf message from an already-parsed ProtoJSON value (original or lowerCamelCase names). */
export function protoFromJsonValue(method: MethodDescriptor, value: unknown): unknown {
  const type = method.requestType!;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw bindError(
      `the request must be a JSON object (${type.fullName.slice(1)}), got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
    );
  }
  const fast = fastFromJson(type, value as Record<string, unknown>);
  if (fast !== undefined) return fast;
  try {
    return protojson().fromJson(type, value, { ignoreUnknownFields: true });
  } catch (e) {
    throw bindError(`invalid ${type.fullName.slice(1)}: ${(e as Error).message}`);
  }
}

/** Binds a parsed JSON value to a method's arguments (IDL: one message; otherwise the binder rules). */
export function bindJsonValue(method: MethodDescriptor, value: unknown): unknown[] {
  if (method.requestType) {
    // The spec's form is an array holding the one message; the bare message is accepted too.
    if (Array.isArray(value)) {
      if (value.length !== 1) throw bindError(`expected 1 argument in the JSON array, got ${value.length}`);
      value = value[0];
    }
    return [protoFromJsonValue(method, value)];
  }
  let bind = binders.get(method);
  if (!bind) {
    bind = compileJsonBinder(method.params);
    binders.set(method, bind);
  }
  // Every missing field and bad value, and the constraints of what did bind, in one error.
  return bindAll(method, () => (bind as (body: unknown) => unknown[])(value));
}

/** Encodes a result as JSON text: ProtoJSON for IDL methods, plain JSON otherwise. */
export function encodeJsonValue(method: MethodDescriptor, value: unknown): string {
  if (method.responseType) {
    const message = (value ?? {}) as object;
    try {
      return JSON.stringify(fastToJson(method.responseType, message) ?? protojson().toJson(method.responseType, message));
    } catch (e) {
      throw new TypeError(`the handler returned an invalid ${method.responseType.fullName.slice(1)}: ${(e as Error).message}`);
    }
  }
  return stringifyJson(value);
}

/** `application/json`: a JSON array of the arguments in parameter order, or the IDL request message. */
export const jsonRequestCodec: RequestCodec = {
  mediaTypes: ["application/json", "text/json"],
  responseMediaType: "application/json",
  decode(method, body, _mediaType, limits) {
    if (body.length === 0) {
      if (method.params.length === 0) return [];
      if (method.requestType) return [protoFromJsonValue(method, {})];
      throw decodeError("empty JSON body");
    }
    const value = parseJson(utf8(body));
    return withNumberLimits(limits, () => bindJsonValue(method, value));
  },
};

export const jsonResponseCodec: ResponseCodec = {
  mediaType: "application/json",
  encode: encodeJsonValue,
};
