// Owns `jsonBytes`, `resultDecoder`, `jsonClientCodec`. One JSON message: the UTF-8 bytes of a
// value as our JSON writes it. Must not change: limits are checked before memory is spent; bad
// input is a 4xx naming the problem.
import { compileConverter } from "./converters.js";
import { parseJson, stringifyJson } from "./json.js";
import { utf8Decode, utf8Encode } from "../protocol/bytes.js";
import { Code } from "../protocol/code.js";
import { resultMismatch } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";

/**
 * The JSON messages of IDL-less methods as a client writes and reads them: the arguments as a
 * JSON array in parameter order (Triple HTTP's body, each gRPC `+json` message), the result
 * revived into its declared type (`Date`, `bigint`, `Map`, `Uint8Array`, classes). The Node
 * client's codecs and the web client (`triple-rpc/web`) share them; no Node.js API, no protobufjs.
 */

/** A response the client cannot read. */
function badResponse(what: string, e: unknown): RpcError {
  return new RpcError(Code.Internal, `invalid ${what} response: ${(e as Error).message}`, { cause: e });
}

/** One JSON message: the UTF-8 bytes of a value as our JSON writes it. */
export function jsonBytes(value: unknown): Uint8Array {
  return utf8Encode(stringifyJson(value));
}

/** One JSON response message, parsed (undefined for an empty one). */
function decodeJsonResponse(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return parseJson(utf8Decode(bytes));
  } catch (e) {
    throw badResponse("JSON", e);
  }
}

/**
 * The JSON form of an IDL-less call's arguments: a JSON array in parameter order; a single
 * bytes parameter goes bare, since an array there would read as the octets themselves.
 */
function jsonArgs(md: MethodDescriptor): (args: readonly unknown[]) => unknown {
  const single = md.params.length === 1 ? md.params[0].type.kind : undefined;
  if (single === "bytes" || single === "file") return (args) => args[0];
  return (args) => args;
}

/**
 * Client: a decoded JSON result turned into the declared result type (`@Method({ returns })`),
 * so a `Date`, `Uint8Array`, `bigint`, `Map` or class arrives as one; as it is without one.
 */
export function resultDecoder(md: MethodDescriptor): (bytes: Uint8Array) => unknown {
  if (!md.returns) return decodeJsonResponse;
  const conv = compileConverter(md.returns);
  return (bytes) => {
    const v = decodeJsonResponse(bytes);
    if (v === null || v === undefined) return v;
    try {
      return conv(v, "the result");
    } catch (e) {
      throw resultMismatch(md.path, e);
    }
  };
}

/** The client half of a method's JSON messages (IDL-less methods): what both clients encode and decode with. */
export interface JsonClientCodec {
  encodeArgs(args: readonly unknown[]): Uint8Array;
  encodeRequest(value: unknown): Uint8Array;
  decodeResponse(bytes: Uint8Array): unknown;
}

/** The JSON client codec of an IDL-less method: positional arguments out, the declared result revived in. */
export function jsonClientCodec(md: MethodDescriptor): JsonClientCodec {
  const shape = jsonArgs(md);
  return { encodeArgs: (args) => jsonBytes(shape(args)), encodeRequest: jsonBytes, decodeResponse: resultDecoder(md) };
}
