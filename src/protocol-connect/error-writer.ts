import { RpcError } from "../protocol/rpc-error.js";
import { H } from "../protocol/headers.js";
import { sendHttpError } from "../protocol-triple/error-body.js";
import type { OutHeaders, Responder } from "../transport/server/exchange.js";
import { connectErrorObject, connectHttpStatus } from "./wire.js";

/**
 * Who is calling: a Connect client (`connect-protocol-version`, `connect=v1`) or dubbo-js's
 * Triple variant of the protocol (`tri-protocol-version`, `triple=v1.0.0`). Errors are answered
 * in the caller's own terms.
 */
export type ConnectDialect = "connect" | "triple";

/**
 * The one writer of unary Connect error responses: Connect's HTTP status for the code and its
 * error JSON (`{"code", "message", "details"}`); the Triple variant gets the Triple error body
 * (which carries the same `code`, `message` and `details`). A response under way is reset.
 */
export function sendConnectError(ex: Responder, reason: unknown, dialect: ConnectDialect, extra?: OutHeaders): void {
  if (dialect === "triple") {
    sendHttpError(ex, reason, extra);
    return;
  }
  if (ex.headersSent) {
    ex.reset();
    return;
  }
  const err = RpcError.from(reason);
  const headers: OutHeaders = { [H.contentType]: "application/json" };
  for (const k in err.metadata) headers[k] = err.metadata[k];
  if (extra) Object.assign(headers, extra);
  ex.respond(connectHttpStatus(err), headers, JSON.stringify(connectErrorObject(err)));
}
