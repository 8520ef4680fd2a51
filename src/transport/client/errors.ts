// Owns `requestMayHaveRun`, `connectFailure`, `isConnectFailure`, `isConnectErrorCode`, … True when
// the error is a broken connection or stream whose request may have been processed. Must not
// change: every bound on what a peer can make us hold (docs/security.md).
import * as http2 from "node:http2";
import { Code } from "../../protocol/code.js";
import { RpcError } from "../../protocol/rpc-error.js";
import type { Provider } from "./provider.js";

/**
 * The client's transport failures, whatever the protocol: a provider that cannot be reached, a
 * connection or stream that broke. The cluster reads them to mark providers down and to decide
 * whether another attempt may follow.
 */

const connectFailures = new WeakSet<RpcError>();

/**
 * Transport failures after the request was (or may have been) sent: the connection or stream
 * broke with no proof that the handler did not run. Another attempt may follow only for an
 * idempotent method. Everything else the transports report is provably unprocessed: the
 * provider refused the connection or the stream (REFUSED_STREAM), the stream was above a
 * GOAWAY's last stream id, or not one byte of the request left this process.
 */
const mayHaveRun = new WeakSet<RpcError>();

/** Marks a transport error as one whose request may have reached a handler. */
function maybeProcessed(err: RpcError): RpcError {
  mayHaveRun.add(err);
  return err;
}

/** True when the error is a broken connection or stream whose request may have been processed. */
export function requestMayHaveRun(err: unknown): boolean {
  return err instanceof RpcError && mayHaveRun.has(err);
}

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
 * A connection or stream failed after it was established: `unavailable` with the cause. With
 * `sent` (the default) the request may have reached the handler ({@link requestMayHaveRun});
 * pass `sent: false` only when no byte of it left this process. A peer that answers h2c prior
 * knowledge with HTTP/1.1 shows up as nghttp2's bare "Protocol error": say what it means.
 */
export function transportError(address: string, cause: unknown, sent = true): RpcError {
  if (cause instanceof RpcError) return cause;
  const err = brokenConnection(address, cause);
  return sent ? maybeProcessed(err) : err;
}

function brokenConnection(address: string, cause: unknown): RpcError {
  if ((cause as NodeJS.ErrnoException)?.code === "ERR_HTTP2_ERROR") {
    return new RpcError(
      Code.Unavailable,
      `${address} did not answer in HTTP/2 (it may speak HTTP/1.1 only): gRPC calls and client and bidi streams need HTTP/2; ` +
        `an HTTP/1.1-only server takes unary calls and server streams with httpVersion: "1.1"`,
      { cause, legacyStatus: 35 },
    );
  }
  const text = cause instanceof Error ? cause.message : String(cause);
  return new RpcError(Code.Unavailable, `connection to ${address} failed: ${text}`, { cause, legacyStatus: 35 });
}

/** What a client stream knows of its session: the last stream id of a GOAWAY it received. */
export interface SessionState {
  goawayLastStreamId: number | undefined;
}

/**
 * The session state of a stream, set by the transport when it opens the stream: node detaches
 * the streams of a broken connection from their session, so the stream keeps the link.
 */
export const kSession = Symbol("triple.session");
type SessionStream = http2.ClientHttp2Stream & { [kSession]?: SessionState };

/**
 * True when the peer provably did not process the stream: it refused it (REFUSED_STREAM), its id
 * is above the last stream id of a GOAWAY the session received (RFC 9113 §6.8: such streams were
 * not and will not be processed), or it never got an id (its HEADERS were never sent).
 */
function streamUnprocessed(stream: http2.ClientHttp2Stream): boolean {
  if (stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM) return true;
  const id = stream.id;
  if (id === undefined || id <= 0) return true;
  const last = (stream as SessionStream)[kSession]?.goawayLastStreamId;
  return last !== undefined && id > last;
}

/** A stream's 'error' event: a broken connection, retried anywhere only when provably unprocessed. */
export function streamError(provider: Provider, stream: http2.ClientHttp2Stream, cause: unknown): RpcError {
  if (streamUnprocessed(stream)) return refusedStream(provider, stream);
  return transportError(provider.address, cause);
}

function refusedStream(provider: Provider, stream: http2.ClientHttp2Stream): RpcError {
  const why = stream.rstCode === http2.constants.NGHTTP2_REFUSED_STREAM ? "refused the stream (REFUSED_STREAM)" : "did not process the stream (GOAWAY)";
  return new RpcError(Code.Unavailable, `${provider.address} ${why}`);
}

/**
 * The error of an HTTP/2 stream that closed without a complete response. A stream the peer
 * provably did not process (REFUSED_STREAM, above GOAWAY's last stream id) is `unavailable`
 * and may go to another provider. node closes every stream of a connection that broke (the
 * provider crashed or was killed) with CANCEL and detaches it from its session: `unavailable`
 * too, but the request may have run (retried only when idempotent); the peer cancelling the
 * stream leaves the session alive and is `cancelled`.
 */
export function streamClosedError(provider: Provider, stream: http2.ClientHttp2Stream): RpcError {
  const rstCode = stream.rstCode;
  if (streamUnprocessed(stream)) return refusedStream(provider, stream);
  if (rstCode === http2.constants.NGHTTP2_CANCEL && (!stream.session || stream.session.destroyed)) {
    return maybeProcessed(
      new RpcError(Code.Unavailable, `the connection to ${provider.address} closed before the response was complete`, { legacyStatus: 35 }),
    );
  }
  if (rstCode === http2.constants.NGHTTP2_CANCEL) {
    return new RpcError(Code.Cancelled, `${provider.address} cancelled the stream`);
  }
  if (rstCode === http2.constants.NGHTTP2_ENHANCE_YOUR_CALM) {
    return new RpcError(Code.ResourceExhausted, `${provider.address} reset the stream (ENHANCE_YOUR_CALM)`);
  }
  return maybeProcessed(
    new RpcError(
      Code.Unavailable,
      `the stream to ${provider.address} closed before the response was complete${rstCode ? ` (RST_STREAM code ${rstCode})` : ""}`,
    ),
  );
}
