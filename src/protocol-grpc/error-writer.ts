/**
 * gRPC's error writers, the only ones every gRPC path uses: a status as trailers (or a
 * trailers-only response), and over HTTP/1.1, which cannot carry trailers, a plain HTTP error
 * with the status as headers. The status fields themselves are encoded in `status.ts`.
 */
import { H } from "../protocol/headers.js";
import type { RpcError } from "../protocol/rpc-error.js";
import { sendHttpError } from "../runtime/http-error.js";
import type { OutHeaders, Responder } from "../transport/server/exchange.js";
import { encodeGrpcMessage, statusHeaders } from "./status.js";

/**
 * The one writer of a gRPC status, for every path that ends a gRPC call (a refusal before the
 * call starts, the handler's outcome, a deadline, shutdown, the listener's refusals): a
 * trailers-only response (one HEADERS frame that ends the stream) when nothing was sent yet,
 * else the trailers. `headers` go out with a trailers-only answer (content type, a handler's
 * response headers); `trailers` are the handler's trailing metadata; `httpStatus` is 200 except
 * for the 415 gRPC gives an unsupported content type.
 */
export function sendGrpcStatus(ex: Responder, err: RpcError | undefined, headers: OutHeaders, trailers?: OutHeaders, httpStatus = 200): void {
  if (!ex.headersSent) {
    if (trailers) Object.assign(headers, trailers);
    statusHeaders(err, headers);
    ex.respond(httpStatus, headers);
    return;
  }
  const t = trailers ?? {};
  statusHeaders(err, t);
  ex.end(t);
}

/**
 * A gRPC call that cannot be served over HTTP/1.1 (no trailers): the server's plain HTTP error
 * (`err`'s status, 505, and the JSON error body), with `grpc-status`/`grpc-message` headers.
 */
export function sendGrpcHttp1Error(ex: Responder, err: RpcError): void {
  sendHttpError(ex, err, { [H.grpcStatus]: String(err.code), [H.grpcMessage]: encodeGrpcMessage(err.message) });
}
