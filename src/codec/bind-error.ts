// Owns `bindError`, `decodeError`, `unsupportedMediaType`, `overLimit`. A request whose arguments
// have the wrong shape or types: 400, legacy status 40. Must not change: limits are checked before
// memory is spent; bad input is a 4xx naming the problem.
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";

/** A request whose arguments have the wrong shape or types: 400, legacy status 40. */
export function bindError(message: string): RpcError {
  return new RpcError(Code.InvalidArgument, message, { legacyStatus: 40 });
}

/** A body that could not be decoded at all: 400, legacy status 25. */
export function decodeError(message: string, cause?: unknown): RpcError {
  return new RpcError(Code.InvalidArgument, message, { legacyStatus: 25, cause });
}

/** An unsupported media type or charset: 415, legacy status 25. */
export function unsupportedMediaType(message: string): RpcError {
  return new RpcError(Code.Internal, message, { httpStatus: 415, legacyStatus: 25 });
}

/** A body over one of the decode limits (form fields, multipart parts, XML attributes…): 413 resource_exhausted. */
export function overLimit(message: string): RpcError {
  return new RpcError(Code.ResourceExhausted, message, { httpStatus: 413 });
}
