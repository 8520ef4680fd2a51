// Owns `connectErrorObject`, `dialectErrorObject`. The error JSON object: `{"code", "message"?,
// "details"?: [{"type", "value", "debug"?}]}`; the message cut to 1 KiB (`boundMessage`). Must not
// change: the code and status tables and error shapes every protocol shares.
import { badRequestViolations, isBadRequestType } from "./bad-request.js";
import { Code, codeName } from "./code.js";
import type { RpcError } from "./rpc-error.js";
import { legacyStatusOf } from "./status-table.js";
import { boundMessage } from "./wire-text.js";

/**
 * The JSON error body shared by Triple HTTP and Connect (the Triple body is Connect's shape,
 * plus dubbo-js's numeric `status` in its own dialect). Both protocol folders and the runtime's
 * error writer use it, so it lives with the wire vocabulary.
 */

/** Connect's code strings are gRPC's snake_case names, except `canceled` (one L). */
function connectCodeName(code: Code): string {
  return code === Code.Cancelled ? "canceled" : codeName(code);
}

/** Base64 without padding (what Connect writes; readers accept both). */
function unpadded(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64").replace(/=+$/, "");
}

/** A detail's type as Connect writes it: the message's full name, without a type URL prefix. */
function detailTypeName(type: string): string {
  return type.slice(type.lastIndexOf("/") + 1);
}

/**
 * One error detail as JSON: `{"type", "value": <base64>}`, and for a `google.rpc.BadRequest` its
 * `debug` form too (Connect's JSON errors allow one per detail): the detail's ProtoJSON,
 * `{"fieldViolations": [{"field", "description"}]}`, so a browser reads the violations without
 * a protobuf decoder. Readers that do not know `debug` ignore it.
 */
function detailJson(d: RpcError["details"][number]): Record<string, unknown> {
  const o: Record<string, unknown> = { type: detailTypeName(d.type), value: unpadded(d.value) };
  if (isBadRequestType(d.type)) o.debug = { fieldViolations: badRequestViolations({ details: [d] }) };
  return o;
}

/** The error JSON object: `{"code", "message"?, "details"?: [{"type", "value", "debug"?}]}`; the message cut to 1 KiB (`boundMessage`). */
export function connectErrorObject(err: RpcError): Record<string, unknown> {
  const o: Record<string, unknown> = { code: connectCodeName(err.code) };
  if (err.message) o.message = boundMessage(err.message);
  if (err.details.length > 0) o.details = err.details.map(detailJson);
  return o;
}

/**
 * Who is calling: a Connect client (`connect-protocol-version`, `connect=v1`) or dubbo-js's
 * Triple variant of the protocol (`tri-protocol-version`, `triple=v1.0.0`). Errors are answered
 * in the caller's own terms.
 */
export type ConnectDialect = "connect" | "triple";

/**
 * The error object in the caller's dialect: Connect's `{"code": "<name>", "message", "details"}`,
 * or dubbo-js's, whose reader takes only a numeric `status` (the gRPC code) and fails on anything
 * else: `{"status": <gRPC code>, "message", "code": "<name>", "details"}`.
 */
export function dialectErrorObject(err: RpcError, dialect: ConnectDialect): Record<string, unknown> {
  const o = connectErrorObject(err);
  return dialect === "connect" ? o : { status: err.code, ...o, code: codeName(err.code) };
}

/**
 * The JSON error body of Triple HTTP calls: `status` (the legacy Dubbo status: 25 undecodable,
 * 31 server timeout, 35 unavailable, 40 bad request, 60 not found, 70 service error, 80 server
 * error), `message` (the raw text), our `code` (the gRPC code's snake_case name), and when the
 * error carries details, `details`: `[{"type": "<message full name>", "value": "<base64>", "debug"?}]`
 * (`debug`: a BadRequest's violations as JSON, `{"fieldViolations": [{"field", "description"}]}`),
 * the form Connect and dubbo-js clients read. The message is cut to 1 KiB (`boundMessage`).
 *
 * With `grpcCodeStatus` (the server's `dubboJsErrors` option, for a caller that looks like
 * dubbo-js: {@link readsGrpcCodeStatus}) the body is `{"status": <gRPC code>, "message", "code",
 * "details"}`, the only form dubbo-js reads.
 */
export function errorBody(err: RpcError, grpcCodeStatus = false): string {
  if (grpcCodeStatus) return JSON.stringify(dialectErrorObject(err, "triple"));
  const body: Record<string, unknown> = { status: legacyStatusOf(err), message: boundMessage(err.message), code: codeName(err.code) };
  if (err.details.length > 0) body.details = connectErrorObject(err).details;
  return JSON.stringify(body);
}
