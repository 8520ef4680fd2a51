// Owns `HttpReply`, `UnaryRequest`, `UnaryTransport`, `TransportSettings`. A complete HTTP response
// of a unary call. Must not change: every bound on what a peer can make us hold (docs/security.md).
import type { OutgoingHttpHeaders } from "node:http";
import type { HeaderMap } from "../../protocol/headers.js";
import type { Provider } from "./provider.js";

/** A complete HTTP response of a unary call. */
export interface HttpReply {
  status: number;
  headers: HeaderMap;
  body: Buffer;
  /** HTTP/2 trailers, when the response had any. */
  trailers?: HeaderMap;
}

/** One unary POST: where, what, and the limits of waiting and of reading. */
export interface UnaryRequest {
  readonly path: string;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Uint8Array;
  readonly signal: AbortSignal;
  /** The largest response body accepted. */
  readonly maxBytes: number;
}

/** Moves one unary Triple HTTP exchange (POST, whole body each way) over some HTTP version. */
export interface UnaryTransport {
  /**
   * Posts `req.body` to `provider` and collects the response (at most `req.maxBytes` of body). Rejects
   * with `req.signal.reason` when the signal aborts, with a connect failure when the provider cannot
   * be reached, and with `unavailable` when the connection breaks.
   */
  post(provider: Provider, req: UnaryRequest): Promise<HttpReply>;
  /** Closes idle connections; calls in flight finish. */
  close(): void;
}

/** Options shared by the transports. */
export interface TransportSettings {
  readonly connectTimeoutMs: number;
  readonly tls: import("node:tls").ConnectionOptions | undefined;
}
