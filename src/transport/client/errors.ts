import * as http2 from "node:http2";
import { Code } from "../../protocol/code.js";
import { RpcError } from "../../protocol/rpc-error.js";
import type { Provider } from "../../client/provider.js";

/**
 * The client's transport failures, whatever the protocol: a provider that cannot be reached, a
 * connection or stream that broke. The cluster reads them to mark providers down and to decide
 * whether another attempt may follow.
 */

const connectFailures = new WeakSet<RpcError>();

const CONNECT_CODES = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET"]);

/**
 * A provider could not be reached (refused, unreachable, unresolvable, connect timeout):
 * `unavailable`, remembered so the cluster marks the provider down.
 */
export function connectFailure(address: string, cause: unknown): RpcError {
  const text = cause instanceof Error ? cause.message : String(cause);
  const err = new RpcError(Code.Unavailable, `cannot connect to ${address}: ${text}`, { cause, legacyStatus: 35 });
  connectFailures.add(err);
  return err;
}

/** True when the error says the provider could not be connected to. */
export function isConnectFailure(err: unknown): boolean {
  return err instanceof RpcError && connectFailures.has(err);
}

/** True when a socket error happened while connecting (no byte exchanged yet). */
export function isConnectErrorCode(e: unknown): boolean {
  return CONNECT_CODES.has((e as NodeJS.ErrnoException)?.code ?? "");
}

/**
 * A connection or stream failed after it was established: `unavailable` with the cause. A peer
 * that answers h2c prior knowledge with HTTP/1.1 shows up as nghttp2's bare "Protocol error":
 * say what it means.
 */
export function transportError(address: string, cause: unknown): RpcError {
  if (cause instanceof RpcError) return cause;
  if ((cause as NodeJS.ErrnoException)?.code === "ERR_HTTP2_ERROR") {
    return new RpcError(
      Code.Unavailable,
      `${address} did not answer in HTTP/2 (it may speak HTTP/1.1 only): gRPC and streaming calls need HTTP/2; ` +
        `an HTTP/1.1-only server takes unary calls with httpVersion: "1.1"`,
      { cause, legacyStatus: 35 },
    );
  }
  const text = cause instanceof Error ? cause.message : String(cause);
  return new RpcError(Code.Unavailable, `connection to ${address} failed: ${text}`, { cause, legacyStatus: 35 });
}

/**
 * The error of an HTTP/2 stream that closed without a complete response. node closes every
 * stream of a connection that broke (the provider crashed or was killed) with CANCEL and detaches
 * it from its session: that is `unavailable` (a broken connection, retried elsewhere), not the
 * peer cancelling the stream, which leaves the session alive.
 */
export function streamClosedError(provider: Provider, stream: http2.ClientHttp2Stream): RpcError {
  const rstCode = stream.rstCode;
  if (rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) {
    return new RpcError(Code.Unavailable, `${provider.address} refused the stream (REFUSED_STREAM)`);
  }
  if (rstCode === http2.constants.NGHTTP2_CANCEL && (!stream.session || stream.session.destroyed)) {
    return new RpcError(Code.Unavailable, `the connection to ${provider.address} closed before the response was complete`, {
      legacyStatus: 35,
    });
  }
  if (rstCode === http2.constants.NGHTTP2_CANCEL) {
    return new RpcError(Code.Cancelled, `${provider.address} cancelled the stream`);
  }
  if (rstCode === http2.constants.NGHTTP2_ENHANCE_YOUR_CALM) {
    return new RpcError(Code.ResourceExhausted, `${provider.address} reset the stream (ENHANCE_YOUR_CALM)`);
  }
  return new RpcError(
    Code.Unavailable,
    `the stream to ${provider.address} closed before the response was complete${rstCode ? ` (RST_STREAM code ${rstCode})` : ""}`,
  );
}
