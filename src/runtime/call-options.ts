// Owns `callOptions`, `splitArgs`. Marks an object as per-call options, so it is never mistaken for
// an argument. Without it, a trailing object beyond the method's parameter count is taken as
// options. Must not change: the rules every protocol relies on (docs/architecture.md).
import type { MetadataInit } from "../protocol/rpc-error.js";

const CALL_OPTIONS = Symbol.for("triple-rpc:call-options");

/** Per-call options: the last argument of any client method. */
export interface CallOptions {
  /** Timeout of this call in ms (overrides the client's and the method's); 0: none. */
  timeoutMs?: number;
  /** Metadata of this call (merged over the client's). */
  metadata?: MetadataInit;
  /** Cancels the call: the call fails with `cancelled`. */
  signal?: AbortSignal;
  /**
   * Dubbo's `dubbo.tag` for this call (over the client's `tag` and a tag carried from the incoming
   * call): tag routing sends it to the providers of that tag. Sent as the `dubbo.tag` attachment.
   */
  tag?: string;
  /** Dubbo's `dubbo.force.tag`: with a tag no provider has, fail instead of falling back to untagged providers. */
  forceTag?: boolean;
  /** Receives the response headers. */
  onHeaders?(headers: Readonly<Record<string, string | string[]>>): void;
  /**
   * Receives the response trailers: gRPC trailers, or the `trailer-` headers of a Triple HTTP
   * unary response (prefix stripped), the end-stream metadata of Connect, gRPC-Web's trailer
   * block: one string per name on every protocol (a repeated one's values joined with ", "),
   * `-bin` entries as bytes.
   */
  onTrailers?(trailers: Readonly<Record<string, string | string[] | Uint8Array>>): void;
}

/**
 * Marks an object as per-call options, so it is never mistaken for an argument. Without it, a
 * trailing object beyond the method's parameter count is taken as options.
 */
export function callOptions(options: CallOptions): CallOptions {
  return Object.defineProperty({ ...options }, CALL_OPTIONS, { value: true });
}

/** Splits call arguments into the method's arguments and the per-call options. */
export function splitArgs(args: unknown[], paramCount: number): [unknown[], CallOptions | undefined] {
  const last = args[args.length - 1];
  if (typeof last === "object" && last !== null) {
    if ((last as Record<symbol, unknown>)[CALL_OPTIONS] === true) return [args.slice(0, -1), last as CallOptions];
    if (args.length === paramCount + 1 && !Array.isArray(last)) return [args.slice(0, -1), last as CallOptions];
  }
  return [args, undefined];
}
