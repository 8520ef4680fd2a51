// Owns `httpStatusOf`, `legacyStatusOf`, `codeFromHttpStatus`, `codeFromLegacyStatus`. HTTP
// status of an error response for this error. Must not change: the code and status tables and error
// shapes every protocol shares.
import { Code } from "./code.js";
import type { RpcError } from "./rpc-error.js";

/**
 * The three status vocabularies side by side (docs/protocol.md, "Errors"):
 * gRPC code → HTTP status and legacy Dubbo status for our error bodies, and HTTP status →
 * code for clients that received no usable body.
 */
const codeToHttp: readonly number[] = [
  200, // ok
  499, // cancelled
  500, // unknown
  400, // invalid_argument
  408, // deadline_exceeded
  404, // not_found
  409, // already_exists
  403, // permission_denied
  429, // resource_exhausted (413 / 431 set by the thrower)
  412, // failed_precondition
  409, // aborted
  400, // out_of_range
  404, // unimplemented
  500, // internal
  503, // unavailable
  500, // data_loss
  401, // unauthenticated
];

const codeToLegacy: readonly number[] = [
  20, // ok
  70, // cancelled
  70, // unknown: a handler's error ("service error")
  40, // invalid_argument
  31, // deadline_exceeded (server side)
  60, // not_found
  70, // already_exists
  70, // permission_denied
  70, // resource_exhausted (40 for 413/431, below)
  40, // failed_precondition
  70, // aborted
  40, // out_of_range
  60, // unimplemented
  80, // internal
  35, // unavailable
  80, // data_loss
  70, // unauthenticated
];

/** HTTP status of an error response for this error. */
export function httpStatusOf(err: RpcError): number {
  return err.httpStatus ?? codeToHttp[err.code] ?? 500;
}

/** Legacy Dubbo status of an error response for this error (20 ok, 25 undecodable, 31 timeout, 35 unavailable, 40 bad request, 60 not found, 70 service error, 80 server error). */
export function legacyStatusOf(err: RpcError): number {
  if (err.legacyStatus !== undefined) return err.legacyStatus;
  const http = httpStatusOf(err);
  if (err.code === Code.ResourceExhausted && (http === 413 || http === 431)) return 40;
  return codeToLegacy[err.code] ?? 80;
}

/** The code a client infers from an HTTP status alone (the Triple protocol's HTTP status table). */
export function codeFromHttpStatus(status: number): Code {
  switch (status) {
    case 400:
      return Code.InvalidArgument;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.Unimplemented;
    case 408:
      return Code.DeadlineExceeded;
    case 409:
      return Code.Aborted;
    case 412:
      return Code.FailedPrecondition;
    case 413:
    case 431:
      return Code.ResourceExhausted;
    case 415:
      return Code.Internal;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.Unavailable;
    default:
      return Code.Unknown;
  }
}

/** The code for a legacy Dubbo status number (used when a peer sends only that). */
export function codeFromLegacyStatus(status: number): Code | undefined {
  switch (status) {
    case 20:
      return Code.OK;
    case 25:
    case 40:
      return Code.InvalidArgument;
    case 30:
    case 31:
      return Code.DeadlineExceeded;
    case 35:
      return Code.Unavailable;
    case 60:
      return Code.Unimplemented;
    case 70:
      return Code.Unknown;
    case 50:
    case 80:
    case 90:
      return Code.Internal;
    default:
      return undefined;
  }
}
