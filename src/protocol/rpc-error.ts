// Owns `RpcError`. The one error type of triple-rpc, on the server and on the client. `message` is
// the raw text (a handler's error text stays exactly as it was thrown). Must not change: the code
// and status tables and error shapes every protocol shares.
import { Code, codeName, isCode } from "./code.js";

/** Header-like metadata carried by calls and errors: lower-case names, string or string[] values. */
export type MetadataInit = Record<string, string | string[]>;

/** Options for {@link RpcError}. */
export interface RpcErrorOptions {
  /** Metadata sent with the error (gRPC trailers, HTTP response headers). */
  metadata?: MetadataInit;
  /** Error details: google.protobuf.Any-like `{ type, value }` entries. */
  details?: ErrorDetail[];
  /** The underlying error. */
  cause?: unknown;
  /** Overrides the HTTP status derived from the code (413 vs 431 vs 429 for resource_exhausted, 415, 405 …). */
  httpStatus?: number;
  /** Overrides the legacy Dubbo status derived from the code (25 for undecodable bodies, 30 for client timeouts). */
  legacyStatus?: number;
  /** The message as the peer sent it, when `message` words it differently. */
  rawMessage?: string;
}

/** One error detail: a protobuf `Any` (type URL or name, and the encoded message). */
export interface ErrorDetail {
  type: string;
  value: Uint8Array;
}

/**
 * The one error type of triple-rpc, on the server and on the client. `message` is the raw
 * text (a handler's error text stays exactly as it was thrown); `code` is a gRPC code.
 */
export class RpcError extends Error {
  override name = "RpcError";
  readonly code: Code;
  readonly metadata: MetadataInit;
  readonly details: ErrorDetail[];
  readonly httpStatus: number | undefined;
  readonly legacyStatus: number | undefined;
  /**
   * The peer's own words: the message as it arrived. Equal to `message`, except on errors that
   * wrap another (a `FailoverError`'s `message` is Dubbo's sentence, its `rawMessage` the last
   * attempt's text).
   */
  readonly rawMessage: string;

  constructor(code: Code, message: string, options: RpcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = isCode(code) ? code : Code.Unknown;
    this.rawMessage = options.rawMessage ?? message;
    this.metadata = options.metadata ?? {};
    this.details = options.details ?? [];
    this.httpStatus = options.httpStatus;
    this.legacyStatus = options.legacyStatus;
  }

  /** `unknown: name is not right: x` — the code name and the raw message, the form failover messages quote. */
  override toString(): string {
    return this.message ? `${codeName(this.code)}: ${this.message}` : codeName(this.code);
  }

  /**
   * Turns anything thrown into an RpcError: an RpcError stays as it is, anything else becomes
   * `fallback` (unknown by default) with the thrown error's message and the error as cause.
   */
  static from(reason: unknown, fallback: Code = Code.Unknown): RpcError {
    if (reason instanceof RpcError) return reason;
    if (reason instanceof Error) {
      if (reason.name === "AbortError") return new RpcError(Code.Cancelled, reason.message, { cause: reason });
      return new RpcError(fallback, reason.message, { cause: reason });
    }
    return new RpcError(fallback, String(reason), { cause: reason });
  }
}
