import { errorBody } from "../protocol/error-json.js";
import { compressResponseBody } from "../protocol/compression.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { httpStatusOf } from "../protocol/status-table.js";
import type { OutHeaders, Responder } from "../transport/server/exchange.js";

/**
 * True for a request from dubbo-js on Node (`@apachedubbo/dubbo-node`), whose unary error reader
 * takes `status` only as a gRPC code (0–16) and otherwise falls back to `HTTP <status>`, dropping
 * the message and details: every request it sends carries `tri-protocol-version: 1.0.0` and no
 * `user-agent` (node's HTTP clients add none). So does any spec-following caller written with
 * node:http or node:http2: the signal does not tell them apart, so it is used only when the
 * server opts in (`dubboJsErrors`); by default every caller gets the protocol's body.
 */
export function readsGrpcCodeStatus(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[H.triProtocolVersion] === "1.0.0" && headers[H.userAgent] === undefined;
}

/** The headers of a JSON error response: its content type, the error's metadata, then `extra`. */
export function errorHeaders(err: RpcError, extra: OutHeaders | undefined): OutHeaders {
  const headers: OutHeaders = { [H.contentType]: "application/json" };
  for (const k in err.metadata) headers[k] = err.metadata[k];
  if (extra) Object.assign(headers, extra);
  return headers;
}

/**
 * The one writer of Triple HTTP error responses, for every path that answers a plain HTTP
 * caller with an error (handler errors, refusals, CORS, shutdown, the listener's refusals): the
 * error's HTTP status, `application/json`, compressed when the client accepts it and it is worth
 * it, the error's metadata as headers. A response already under way is reset instead.
 * `dubboJsErrors`: the server's option of that name (Triple unary calls pass it).
 */
export function sendHttpError(ex: Responder, reason: unknown, extra?: OutHeaders, dubboJsErrors = false): void {
  if (ex.headersSent) {
    ex.reset();
    return;
  }
  const err = RpcError.from(reason);
  const headers = errorHeaders(err, extra);
  const body = compressResponseBody(errorBody(err, dubboJsErrors && readsGrpcCodeStatus(ex.headers)), ex.headers, headers);
  ex.respond(httpStatusOf(err), headers, body);
}
