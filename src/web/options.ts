// Owns `WebProtocol`, `WebTokenSource`, `WebClientOptions`. The protocol of the web client's unary
// and server-streaming calls: `triple` (Triple HTTP: unary POSTs with the arguments as a JSON array
// … Must not change: no node: import and no server code: it runs in browsers (the bundle budget
// test checks).
import type { MetadataInit } from "../protocol/rpc-error.js";
import type { ClientInterceptor } from "../client/interceptor.js";
import type { FetchFn, WebStreamTransport } from "./transport.js";

/**
 * The protocol of the web client's unary and server-streaming calls: `triple` (Triple HTTP:
 * unary POSTs with the arguments as a JSON array; no server streams), `connect` (Connect:
 * unary POST, or GET for idempotent methods with `useGet`; server streams as enveloped
 * messages in a streamed response body), `grpc-web` (gRPC-Web, binary or text).
 */
export type WebProtocol = "triple" | "connect" | "grpc-web";

/** A bearer token, or a function that yields one per call (refreshing tokens). */
export type WebTokenSource = string | (() => string | Promise<string>);

/** Options of the web client's `createClient`. */
export interface WebClientOptions {
  /** The server's origin and path prefix: `https://api.example.com` (`/greet.GreetService/Greet` is appended). */
  baseUrl: string;
  /** `triple` (default), `connect` or `grpc-web`. */
  protocol?: WebProtocol;
  /**
   * Message format: `json` (default for `triple` and `connect`) or `proto` (default for
   * `grpc-web`). `proto` loads the protobuf support on the first call (a dynamic import), so a
   * JSON-only bundle does not carry it.
   */
  contentType?: "json" | "proto";
  /** gRPC-Web's body encoding: `binary` (default, `application/grpc-web+proto`) or `text` (base64, `application/grpc-web-text`). */
  grpcWebFormat?: "binary" | "text";
  /** Connect: send unary calls of idempotent methods (`@Method({ idempotent: true })`) as GET, so HTTP caches can serve them. Default false. */
  useGet?: boolean;
  /** Default call timeout in ms (whole call, retries included). None by default. */
  timeoutMs?: number;
  /** Metadata sent with every call (headers). */
  metadata?: MetadataInit;
  /** Sends `authorization: Bearer <token>`. */
  token?: WebTokenSource;
  /**
   * Retries of a unary call refused before any handler ran (`unavailable` with no response
   * message, a network failure before the request was sent) and, for idempotent methods, of any
   * `unavailable`; default 2. The same safe-retry rule as the Node client, on the one origin.
   */
  retries?: number;
  /** `tri-service-version` to select. */
  version?: string;
  /** `tri-service-group` to select. */
  group?: string;
  /** The service name, when it differs from the class's `@Service` name. */
  serviceName?: string;
  /** Largest response body or message accepted; default 4 MiB. */
  maxResponseBytes?: number;
  /** The `fetch` to call; default `globalThis.fetch`. */
  fetch?: FetchFn;
  /** `fetch`'s `credentials` (cookies on cross-origin calls: `include`); default the browser's (`same-origin`). */
  credentials?: "omit" | "same-origin" | "include";
  /** The transport of client- and bidi-streaming calls (a WebSocket transport); without one such calls fail with `unimplemented`. */
  streams?: WebStreamTransport;
  /** Client interceptors, outermost first (the Node client's type). */
  interceptors?: readonly ClientInterceptor[];
}
