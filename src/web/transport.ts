// Owns `WebHeaders`, `FetchFn`, `WebCallInit`, `WebStreamCall`, … Request or response headers:
// lower-case names, one string each (repeated values joined with ", "). Must not change: no node:
// import and no server code: it runs in browsers (the bundle budget test checks).
import type { MethodDescriptor } from "../service/descriptors.js";

/**
 * The transport seam of the web client (`triple-rpc/web`), one interface per call kind that
 * does not fit one `fetch`: unary and server-streaming calls go through `fetch` (a request
 * body, a streamed response body); client- and bidi-streaming calls need a request body that
 * is still being written while responses come back, which `fetch` cannot do in browsers, so
 * they go through a {@link WebStreamTransport} given in the client's `streams` option (the
 * Triple-over-WebSocket transport is one). The client core encodes and decodes messages with
 * the method's codec, adds metadata, credentials and the deadline, and runs interceptors; a
 * transport only moves encoded messages and reports how the call ended.
 *
 * This module loads nothing: types only, no `node:` module, so a browser bundle can import it.
 */

/** Request or response headers: lower-case names, one string each (repeated values joined with ", "). */
export type WebHeaders = Record<string, string>;

/** The `fetch` function the client calls (the global one by default): a browser's, Deno's, Bun's, a worker's, undici's. */
export type FetchFn = (input: string, init: RequestInit) => Promise<Response>;

/** What the client hands a transport for one call. */
export interface WebCallInit {
  /** The method: its path (`/greet.GreetService/Greet`), kind, parameters and declared result. */
  readonly method: MethodDescriptor;
  /** The method's absolute URL: the client's `baseUrl` and the method's path (`http:`/`https:`; a WebSocket transport maps it to `ws:`/`wss:`). */
  readonly url: string;
  /**
   * The request headers: the protocol's (content type, protocol version), the client's and the
   * call's metadata, credentials, and the time left before the deadline in the protocol's
   * timeout header. A transport that cannot send headers (a browser's WebSocket) carries them
   * as its protocol says, or refuses a call whose headers it cannot carry.
   */
  readonly headers: WebHeaders;
  /** The media type of the encoded messages: `application/json` (text) or `application/proto` (binary). */
  readonly contentType: string;
  /** Aborted when the call is cancelled (the caller's signal) or its deadline passes; the transport then ends the call at once. */
  readonly signal: AbortSignal;
  /** The call's deadline as `Date.now()` milliseconds; undefined: none. */
  readonly deadline: number | undefined;
  /** The largest response message accepted, in bytes; a larger one fails the call with `resource_exhausted`. */
  readonly maxBytes: number;
}

/**
 * One open client- or bidi-streaming call. The client core sends the caller's request messages
 * with {@link send} (waiting on each, which is the back-pressure), then {@link end}s; it reads
 * {@link responses} until they end. Every failure (the server's error, a broken connection, a
 * refused upgrade) surfaces as an `RpcError` thrown from {@link responses} (and `send` resolving
 * false), never as an unhandled rejection.
 */
export interface WebStreamCall {
  /** Sends one encoded request message; resolves once it is handed on, false when the call is already over. */
  send(message: Uint8Array): Promise<boolean>;
  /** Ends the request side (half-close): the server sees the end of the request stream. */
  end(): void;
  /**
   * The encoded response messages, in order. Ends when the call succeeded; throws the call's
   * `RpcError` when it failed (the server's code, message and details; `cancelled` after
   * {@link cancel} or an aborted signal; `deadline_exceeded` past the deadline).
   */
  readonly responses: AsyncIterable<Uint8Array>;
  /** The response headers (call metadata) once they arrived; resolves to `{}` where the transport has none. */
  readonly headers: Promise<WebHeaders>;
  /** The response trailers once the call is over; resolves to `{}` where the transport has none. */
  readonly trailers: Promise<WebHeaders>;
  /** Cancels the call at once (a WebSocket closes with a non-1000 code); {@link responses} then throw `cancelled`. */
  cancel(reason?: unknown): void;
}

/** Opens client- and bidi-streaming calls: the `streams` option of the web client. */
export interface WebStreamTransport {
  /** A short name for errors and telemetry (`websocket`). */
  readonly name: string;
  /** Opens one call; it fails through the returned call's `responses`, not by throwing. */
  open(init: WebCallInit): WebStreamCall;
}
