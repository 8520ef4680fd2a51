// Owns `sendConnectError`. The one writer of unary Connect error responses: Connect's HTTP status
// for the code and its error JSON (`{"code", "message", "details"}`). Must not change: the Connect
// protocol's wire rules, as connect-es speaks them.
import { RpcError } from "../protocol/rpc-error.js";
import { errorHeaders } from "../runtime/http-error.js";
import { httpStatusOf } from "../protocol/status-table.js";
import type { OutHeaders, Responder } from "../transport/server/exchange.js";
import { type ConnectDialect, dialectErrorObject } from "../protocol/error-json.js";
import { connectHttpStatus } from "./wire.js";

export type { ConnectDialect } from "../protocol/error-json.js";

/**
 * The one writer of unary Connect error responses: Connect's HTTP status for the code and its
 * error JSON (`{"code", "message", "details"}`); the Triple variant gets Triple's HTTP status and
 * dubbo-js's error JSON (`{"status": <gRPC code>, "message", "code", "details"}`, the only shape
 * dubbo-js reads). A response under way is reset.
 */
export function sendConnectError(ex: Responder, reason: unknown, dialect: ConnectDialect, extra?: OutHeaders): void {
  if (ex.headersSent) {
    ex.reset();
    return;
  }
  const err = RpcError.from(reason);
  const headers = errorHeaders(err, extra);
  const status = dialect === "triple" ? httpStatusOf(err) : connectHttpStatus(err);
  ex.respond(status, headers, JSON.stringify(dialectErrorObject(err, dialect)));
}
