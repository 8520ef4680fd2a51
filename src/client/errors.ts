import { Code, codeFromName, isCode } from "../protocol/code.js";
import { decodeGrpcMessage, decodeStatusDetails } from "../protocol/grpc-status.js";
import { H, RESERVED_HEADERS } from "../protocol/headers.js";
import { type ErrorDetail, type MetadataInit, RpcError } from "../protocol/rpc-error.js";
import { codeFromHttpStatus, codeFromLegacyStatus } from "../protocol/status-table.js";

export { codeFromGrpcHttpStatus } from "../protocol/status-table.js";

export { decodeGrpcMessage };

/** Response headers or trailers as node gives them. */
export type IncomingHeaders = Readonly<Record<string, string | string[] | number | undefined>>;

function first(v: IncomingHeaders[string]): string | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v[0] : String(v);
}

/** Custom metadata of a response: protocol and pseudo headers left out. */
export function metadataOf(headers: IncomingHeaders | undefined): MetadataInit {
  const out: MetadataInit = {};
  if (!headers) return out;
  for (const k of Object.keys(headers)) {
    const v = headers[k];
    if (v === undefined || k.startsWith(":") || RESERVED_HEADERS.has(k) || k === "content-length" || k === "date") continue;
    out[k] = Array.isArray(v) ? v : String(v);
  }
  return out;
}

/** The client gave up waiting: `deadline_exceeded` with legacy status 30 (spec §7.1 "client side timeout"). */
export function clientTimeoutError(timeoutMs: number): RpcError {
  return new RpcError(Code.DeadlineExceeded, `client side timeout: no response within ${timeoutMs} ms`, {
    legacyStatus: 30,
  });
}

/** The caller's AbortSignal fired: `cancelled`, with the signal's reason as cause. */
export function cancelledError(reason: unknown): RpcError {
  if (reason instanceof RpcError) return reason;
  const text = reason instanceof Error && reason.message ? `: ${reason.message}` : "";
  return new RpcError(Code.Cancelled, `the call was cancelled${text}`, { cause: reason });
}

const LEGACY_STATUSES = new Set([20, 25, 30, 31, 35, 40, 50, 60, 70, 80, 90]);

/**
 * Turns a non-200 Triple HTTP response into an RpcError. Reads our body (`{status, message,
 * code}`) and the other dialects of decisions.md: `status` as an HTTP status string (Dubbo Java),
 * `status` as a gRPC code number (dubbo-js), `code` alone (dubbo-go). Without a usable body the
 * HTTP status decides (spec table 7.2).
 */
export function errorFromHttpResponse(status: number, headers: IncomingHeaders, body: Buffer): RpcError {
  let code = codeFromHttpStatus(status);
  let message = "";
  let legacyStatus: number | undefined;
  let parsed: unknown;
  if (body.length > 0) {
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      // not JSON: a proxy's HTML page or plain text; keep a short excerpt as the message
      message = body.toString("utf8", 0, Math.min(body.length, 512)).trim();
    }
  }
  if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
    const b = parsed as Record<string, unknown>;
    if (typeof b.message === "string") message = b.message;
    const named = typeof b.code === "string" ? codeFromName(b.code) : isCode(b.code) ? b.code : undefined;
    const s = b.status;
    if (typeof s === "number" && LEGACY_STATUSES.has(s)) legacyStatus = s;
    if (named !== undefined) {
      code = named;
    } else if (typeof s === "string" && /^\d{3}$/.test(s)) {
      code = codeFromHttpStatus(Number(s));
    } else if (typeof s === "number" && legacyStatus === undefined && isCode(s)) {
      code = s;
    } else if (typeof s === "number" && legacyStatus !== undefined) {
      // A legacy status alone is coarse (70 covers several codes): trust it only where HTTP says nothing.
      if (code === Code.Unknown) code = codeFromLegacyStatus(s) ?? code;
    }
  } else if (typeof parsed === "string") {
    message = parsed;
  }
  if (!message) message = `HTTP status ${status}`;
  return new RpcError(code, message, { metadata: metadataOf(headers), httpStatus: status, legacyStatus });
}

/**
 * The outcome carried by gRPC trailers (or a trailers-only HEADERS frame): undefined for OK,
 * else an RpcError with the code, the decoded message, details and the trailers as metadata.
 */
export function errorFromGrpcTrailers(trailers: IncomingHeaders): RpcError | undefined {
  const raw = first(trailers[H.grpcStatus]);
  const status = raw === undefined ? Number.NaN : Number(raw);
  if (status === 0) return undefined;
  if (raw === undefined) return new RpcError(Code.Internal, "protocol error: the response has no grpc-status");
  const code = isCode(status) ? status : Code.Unknown;
  const message = decodeGrpcMessage(first(trailers[H.grpcMessage]) ?? "");
  let details: ErrorDetail[] = [];
  const bin = first(trailers[H.grpcStatusDetailsBin]);
  if (bin) {
    try {
      // Type URLs arrive as `type.googleapis.com/<name>`; callers match on the name.
      details = decodeStatusDetails(Buffer.from(bin, "base64")).details.map((d) => ({
        type: d.type.slice(d.type.lastIndexOf("/") + 1),
        value: d.value,
      }));
    } catch {
      // Undecodable details do not hide the status itself.
    }
  }
  return new RpcError(code, message, { metadata: metadataOf(trailers), details });
}

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

/** A connection or stream failed after it was established: `unavailable` with the cause. */
export function transportError(address: string, cause: unknown): RpcError {
  if (cause instanceof RpcError) return cause;
  const text = cause instanceof Error ? cause.message : String(cause);
  return new RpcError(Code.Unavailable, `connection to ${address} failed: ${text}`, { cause, legacyStatus: 35 });
}
