/**
 * The server's plain HTTP error response: what every caller that speaks no RPC protocol gets
 * (CORS refusals, the OpenAPI pages, WebSocket upgrades refused, gRPC over HTTP/1.1) and what
 * Triple's writer builds on. Its JSON body is `errorBody` (protocol/error-json.ts); keep one form.
 */
import { compressResponseBody } from "../protocol/compression.js";
import { errorBody } from "../protocol/error-json.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { httpStatusOf } from "../protocol/status-table.js";
import type { OutHeaders, Responder } from "../transport/server/exchange.js";

/** The headers of a JSON error response: its content type, the error's metadata, then `extra`. */
export function errorHeaders(err: RpcError, extra: OutHeaders | undefined): OutHeaders {
  const headers: OutHeaders = { [H.contentType]: "application/json" };
  for (const k in err.metadata) headers[k] = err.metadata[k];
  if (extra) Object.assign(headers, extra);
  return headers;
}

/**
 * Answers with the error's HTTP status, `application/json`, compressed when the client accepts
 * it and it is worth it, the error's metadata as headers (then `extra`). A response already under
 * way is reset instead. `grpcCodeStatus`: the body's `status` is the gRPC code (dubbo-js's form).
 */
export function sendHttpError(ex: Responder, reason: unknown, extra?: OutHeaders, grpcCodeStatus = false): void {
  if (ex.headersSent) {
    ex.reset();
    return;
  }
  const err = RpcError.from(reason);
  const headers = errorHeaders(err, extra);
  const body = compressResponseBody(errorBody(err, grpcCodeStatus), ex.headers, headers);
  ex.respond(httpStatusOf(err), headers, body);
}
