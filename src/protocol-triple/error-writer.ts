/**
 * Triple HTTP's error writer: the JSON error body with Triple's HTTP status table, and the
 * dubbo-js dialect of it when the server opts in. Every Triple path writes its errors here.
 */
import { H } from "../protocol/headers.js";
import { sendHttpError } from "../runtime/http-error.js";
import type { OutHeaders, Responder } from "../transport/server/exchange.js";

/**
 * True for a request from dubbo-js on Node (`@apachedubbo/dubbo-node`), whose unary error reader
 * takes `status` only as a gRPC code (0–16) and otherwise falls back to `HTTP <status>`, dropping
 * the message and details: every request it sends carries `tri-protocol-version: 1.0.0` and no
 * `user-agent` (node's HTTP clients add none). So does any spec-following caller written with
 * node:http or node:http2: the signal does not tell them apart, so it is used only when the
 * server opts in (`dubboJsErrors`); by default every caller gets the protocol's body.
 */
function readsGrpcCodeStatus(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[H.triProtocolVersion] === "1.0.0" && headers[H.userAgent] === undefined;
}

/**
 * The one writer of Triple HTTP error responses (handler errors, refusals, deadlines, shutdown,
 * the listener's refusals of plain HTTP requests): the server's plain HTTP error
 * (`runtime/http-error.ts`), with the body dubbo-js reads for a caller that looks like it when
 * the server opts in (`dubboJsErrors`, Triple calls pass the server's option).
 */
export function sendTripleError(ex: Responder, reason: unknown, extra?: OutHeaders, dubboJsErrors = false): void {
  sendHttpError(ex, reason, extra, dubboJsErrors && readsGrpcCodeStatus(ex.headers));
}
