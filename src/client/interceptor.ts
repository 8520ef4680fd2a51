// Owns `clientCall`, `effectiveOptions`, `lazyStream`. Builds the call object an interceptor chain
// receives, wiring response metadata back into it. Must not change: the client loads no server
// code.
import type { MethodDescriptor } from "../service/descriptors.js";
import type { CallOptions } from "../runtime/call-options.js";

type Headers = Readonly<Record<string, string | string[]>>;

/** One client call as client interceptors see it. */
export interface ClientCall {
  readonly method: MethodDescriptor;
  /** The arguments; for client- and bidi-streaming methods, one iterable of request messages. */
  readonly input: unknown[];
  /** Request metadata of this call; interceptors may add to it. */
  readonly metadata: Record<string, string | string[]>;
  /** The per-call options (timeout, signal) as the caller passed them. */
  readonly options: CallOptions;
  /** Response headers, once they arrived. */
  responseHeaders: Headers | undefined;
  /** Response trailers (gRPC trailers, or Triple's `trailer-` headers), once they arrived; `-bin` ones as bytes. */
  responseTrailers: Readonly<Record<string, string | string[] | Uint8Array>> | undefined;
  /** Values interceptors share within one call. */
  readonly values: Map<unknown, unknown>;
}

/** Sends the call on: the next interceptor, or the transport. Resolves to the response (an AsyncIterable for server streams). */
export type ClientNext = (call: ClientCall) => Promise<unknown>;

/**
 * Client interceptor, onion style and async, like the server's: it can add request metadata,
 * read response metadata after `await next(call)`, short-circuit by throwing an `RpcError`
 * (or by returning a response without calling `next`), and retry or post-process.
 */
export type ClientInterceptor = (next: ClientNext) => ClientNext;

/** Builds the call object an interceptor chain receives, wiring response metadata back into it. */
export function clientCall(method: MethodDescriptor, input: unknown[], options: CallOptions | undefined): ClientCall {
  const call: ClientCall = {
    method,
    input,
    metadata: { ...(options?.metadata as Record<string, string | string[]> | undefined) },
    options: options ?? {},
    responseHeaders: undefined,
    responseTrailers: undefined,
    values: new Map(),
  };
  return call;
}

/** The transport-level options of a call after the interceptors had their say. */
export function effectiveOptions(call: ClientCall): CallOptions {
  const user = call.options;
  return {
    ...user,
    metadata: call.metadata,
    onHeaders(h) {
      call.responseHeaders = h;
      user.onHeaders?.(h);
    },
    onTrailers(t) {
      call.responseTrailers = t;
      user.onTrailers?.(t);
    },
  };
}

/** An AsyncIterable that waits for the chain to produce the real one (server and bidi streams). */
export async function* lazyStream(result: Promise<unknown>): AsyncGenerator<unknown> {
  yield* (await result) as AsyncIterable<unknown>;
}
