import { codeName } from "../protocol/code.js";
import { COMPRESS_MIN_BYTES, HTTP_COMPRESSIONS, negotiateEncoding } from "../protocol/compression.js";
import { RpcError } from "../protocol/rpc-error.js";
import { httpStatusOf, legacyStatusOf } from "../protocol/status-table.js";
import type { Exchange, OutHeaders } from "../transport/exchange.js";

/** The JSON error body of HTTP unary calls: the spec's `status` and `message`, and our `code`. */
export function errorBody(err: RpcError): string {
  return JSON.stringify({ status: legacyStatusOf(err), message: err.message, code: codeName(err.code) });
}

/**
 * Answers an HTTP unary call with an error: non-200 status, `application/json`, compressed when
 * the client accepts it, the error's metadata as headers.
 */
export function sendHttpError(ex: Exchange, reason: unknown, extra?: OutHeaders): void {
  if (ex.headersSent) {
    ex.reset();
    return;
  }
  const err = RpcError.from(reason);
  const status = httpStatusOf(err);
  const headers: OutHeaders = { "content-type": "application/json" };
  for (const k in err.metadata) headers[k] = err.metadata[k];
  if (extra) Object.assign(headers, extra);
  let body: Buffer | string = errorBody(err);
  if (body.length >= COMPRESS_MIN_BYTES) {
    const ae = ex.headers["accept-encoding"];
    const c = negotiateEncoding(Array.isArray(ae) ? ae.join(",") : ae, HTTP_COMPRESSIONS);
    if (c) {
      body = c.compress(Buffer.from(body));
      headers["content-encoding"] = c.name;
    }
  }
  ex.respond(status, headers, body);
}
