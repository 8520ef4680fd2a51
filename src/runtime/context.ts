// Owns `createContextKey`, `CallContext`. Creates a ContextKey. Must not change: the rules every
// protocol relies on (docs/architecture.md).
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { NOT_BINDABLE } from "../service/type-desc.js";
import type { Exchange, Peer } from "../transport/server/exchange.js";
import type { CallObserver } from "./call-observer.js";
import { type CallTag, tagOfHeaders } from "./call-tag.js";
import { Metadata, OutgoingMetadata } from "./metadata.js";

/** The verified caller, as returned by the server's bearer-token verifier. */
export interface Identity {
  /** Who the caller is. */
  readonly subject: string;
  /** Roles the caller holds, checked against `auth: { roles }`. */
  readonly roles?: readonly string[];
  readonly [key: string]: unknown;
}

/** A typed key for values that interceptors put on a call for handlers to read. */
export interface ContextKey<T> {
  readonly id: symbol;
  readonly defaultValue: T;
}

/** Creates a {@link ContextKey}. */
export function createContextKey<T>(defaultValue: T, description = "context value"): ContextKey<T> {
  return { id: Symbol(description), defaultValue };
}

type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The name of a call's wire protocol (`ServerProtocol.name` of the protocol that claimed it):
 * those built in are Triple HTTP unary (and its Server-Sent Events), gRPC, gRPC-Web, Connect
 * (with dubbo-js's Triple variant of it), MCP tool calls (`createServer({ mcp })`), and Triple
 * over WebSocket. Open: a protocol added to the server's list brings its own name.
 */
export type WireProtocol = "triple" | "grpc" | "grpc-web" | "connect" | "mcp" | "triple-websocket" | (string & {});

/**
 * What a handler knows about its call: request metadata, the deadline, the abort signal, the
 * peer, and response headers and trailers it may set. Inject it with `@Ctx()`.
 */
export class CallContext {
  /** A parameter of this type is injected with `@Ctx()`, never bound from the request. */
  static readonly [NOT_BINDABLE] = "a CallContext parameter is injected, not bound from the request: decorate it with @Ctx() instead of @Param()";

  readonly method: MethodDescriptor;
  /** The wire protocol of the call. */
  readonly protocol: WireProtocol;
  readonly httpVersion: "1.1" | "2";
  /** The peer's address and port. */
  readonly peer: Peer;
  /** Absolute deadline (ms since the epoch), if the caller set a timeout. */
  readonly deadline: number | undefined;
  /** The verified caller, when bearer auth ran. */
  identity: Identity | undefined = undefined;

  // Created on first use: most calls never touch them, and the hot path allocates per call.
  private readonly rawHeaders: RequestHeaders;
  private metadata: Metadata | undefined = undefined;
  private outHeaders: OutgoingMetadata | undefined = undefined;
  private outTrailers: OutgoingMetadata | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private abortReason: RpcError | undefined = undefined;
  private values: Map<symbol, unknown> | undefined = undefined;

  /** @internal The server's in-flight list (see `InflightCalls`): neighbours and exchange. */
  inflightPrev: CallContext | undefined = undefined;
  /** @internal */
  inflightNext: CallContext | undefined = undefined;
  /** @internal */
  inflightExchange: Exchange | undefined = undefined;
  /** @internal The call's telemetry (span, metrics) while an OpenTelemetry SDK is registered. */
  observer: CallObserver | undefined = undefined;

  /** @internal Built by the server for each call; `headers` are the request's, `peer` its connection's. */
  constructor(method: MethodDescriptor, headers: RequestHeaders, protocol: WireProtocol, httpVersion: "1.1" | "2", peer: Peer, timeoutMs: number | undefined) {
    this.method = method;
    this.rawHeaders = headers;
    this.protocol = protocol;
    this.httpVersion = httpVersion;
    this.peer = peer;
    this.deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  }

  /** Request metadata (headers), lower-case names; `-bin` values decode from base64. */
  get requestHeaders(): Metadata {
    return (this.metadata ??= new Metadata(this.rawHeaders));
  }

  /** Response headers to send (HTTP headers; gRPC initial metadata). */
  get responseHeaders(): OutgoingMetadata {
    return (this.outHeaders ??= new OutgoingMetadata());
  }

  /** Response trailers (gRPC trailing metadata; HTTP unary sends them as headers). */
  get responseTrailers(): OutgoingMetadata {
    return (this.outTrailers ??= new OutgoingMetadata());
  }

  /** @internal Copies the response headers a handler set into an outgoing header object. */
  copyResponseHeadersTo(target: Record<string, unknown>): void {
    this.outHeaders?.copyTo(target);
  }

  /** @internal True once a handler touched its response trailers (false: there are none to copy). */
  get hasResponseTrailers(): boolean {
    return this.outTrailers !== undefined;
  }

  /** @internal Copies the response trailers a handler set into an outgoing header object. */
  copyResponseTrailersTo(target: Record<string, unknown>, prefix = ""): void {
    this.outTrailers?.copyTo(target, prefix);
  }

  /**
   * Fires when the call ends early: the deadline passed, the client went away or reset the
   * stream, or the server is shutting down. `signal.reason` is an RpcError saying which.
   */
  get signal(): AbortSignal {
    if (!this.controller) {
      // Created on first use: most handlers never look, and an AbortController is not free.
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** True once the call was aborted. */
  get aborted(): boolean {
    return this.abortReason !== undefined;
  }

  /** Milliseconds left before the deadline, or undefined without one. */
  timeRemaining(): number | undefined {
    return this.deadline === undefined ? undefined : Math.max(0, this.deadline - Date.now());
  }

  /**
   * @internal Ends the call early. The server calls it (deadline, cancellation, shutdown, a
   * failed call); handlers see it through `signal` and `aborted`, and end a call by returning
   * or throwing.
   */
  abort(reason: RpcError = new RpcError(Code.Cancelled, "call cancelled")): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }

  /** Dubbo's routing tag of this call (`dubbo.tag` / `dubbo-tag`, `dubbo.force.tag`), if it has one. */
  get tag(): CallTag | undefined {
    return tagOfHeaders(this.rawHeaders);
  }

  /** Reads a value an interceptor set. */
  get<T>(key: ContextKey<T>): T {
    return this.values?.has(key.id) ? (this.values.get(key.id) as T) : key.defaultValue;
  }

  /** Sets a value for later interceptors and the handler. */
  set<T>(key: ContextKey<T>, value: T): this {
    (this.values ??= new Map()).set(key.id, value);
    return this;
  }
}
