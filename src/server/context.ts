import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
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

/** The transport facts a context needs. */
export interface ContextInit {
  method: MethodDescriptor;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  protocol: "triple" | "grpc";
  httpVersion: "1.1" | "2";
  remoteAddress: string;
  remotePort: number;
  timeoutMs: number | undefined;
}

/**
 * What a handler knows about its call: request metadata, the deadline, the abort signal, the
 * peer, and response headers and trailers it may set. Inject it with `@Ctx()`.
 */
export class CallContext {
  readonly method: MethodDescriptor;
  readonly protocol: "triple" | "grpc";
  readonly httpVersion: "1.1" | "2";
  /** The peer's address and port. */
  readonly peer: { readonly address: string; readonly port: number };
  /** Absolute deadline (ms since the epoch), if the caller set a timeout. */
  readonly deadline: number | undefined;
  /** The verified caller, when bearer auth ran. */
  identity: Identity | undefined;

  // Created on first use: most calls never touch them, and the hot path allocates per call.
  private readonly rawHeaders: ContextInit["headers"];
  private metadata: Metadata | undefined;
  private outHeaders: OutgoingMetadata | undefined;
  private outTrailers: OutgoingMetadata | undefined;
  private controller: AbortController | undefined;
  private abortReason: RpcError | undefined;
  private values: Map<symbol, unknown> | undefined;

  constructor(init: ContextInit) {
    this.method = init.method;
    this.rawHeaders = init.headers;
    this.protocol = init.protocol;
    this.httpVersion = init.httpVersion;
    this.peer = { address: init.remoteAddress, port: init.remotePort };
    this.deadline = init.timeoutMs === undefined ? undefined : Date.now() + init.timeoutMs;
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

  /** Copies the response headers a handler set into an outgoing header object. */
  copyResponseHeadersTo(target: Record<string, unknown>): void {
    this.outHeaders?.copyTo(target);
  }

  /** Copies the response trailers a handler set into an outgoing header object. */
  copyResponseTrailersTo(target: Record<string, unknown>): void {
    this.outTrailers?.copyTo(target);
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

  /** Ends the call early (used by the server; handlers see it through `signal`). */
  abort(reason: RpcError = new RpcError(Code.Cancelled, "call cancelled")): void {
    if (this.abortReason) return;
    this.abortReason = reason;
    this.controller?.abort(reason);
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
