// Owns `deadlineExceeded`, `clientCancelled`, `requestBodyClosed`, `serverShuttingDown`, … The call
// ran past its timeout (server side): deadline_exceeded, HTTP 408, legacy 31. Must not change: the
// code and status tables and error shapes every protocol shares.
import { Code } from "./code.js";
import { RpcError } from "./rpc-error.js";
import { quote } from "./wire-text.js";

/**
 * The errors that more than one path raises, one factory and one wording each, whatever the
 * protocol that carries them. The legacy statuses are Dubbo's: 31 server-side timeout, 30
 * client-side timeout, 35 unavailable, 40 bad request.
 */

/** The call ran past its timeout (server side): deadline_exceeded, HTTP 408, legacy 31. */
export function deadlineExceeded(timeoutMs: number): RpcError {
  return new RpcError(Code.DeadlineExceeded, `the call exceeded its timeout of ${timeoutMs} ms`, { legacyStatus: 31 });
}

/** The client reset the stream or went away before the response ended (server side). */
export function clientCancelled(): RpcError {
  return new RpcError(Code.Cancelled, "the client cancelled the call");
}

/** The client closed the request before its body ended (server side). */
export function requestBodyClosed(): RpcError {
  return new RpcError(Code.Cancelled, "the client closed the request before its body ended");
}

/** A new call arrived after `close()` began. */
export function serverShuttingDown(): RpcError {
  return new RpcError(Code.Unavailable, "the server is shutting down");
}

/** A call still running when the shutdown grace period ended. */
export function serverShutDown(): RpcError {
  return new RpcError(Code.Unavailable, "the server shut down before the call finished");
}

/** More request header fields than the limit: 431. */
export function tooManyHeaders(count: number, limit: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `too many request headers: ${count} (limit ${limit})`, { httpStatus: 431 });
}

/** A request header list over the size limit: 431. */
export function headersTooLarge(limit: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `request header fields too large: more than ${limit} bytes`, {
    httpStatus: 431,
  });
}

/** A request body over the limit: 413. */
export function bodyTooLarge(limit: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `request body larger than ${limit} bytes`, { httpStatus: 413 });
}

/** A framed message whose declared length is over the limit: 413. */
export function messageTooLarge(length: number, limit: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `message of ${length} bytes exceeds the limit of ${limit} bytes`, {
    httpStatus: 413,
  });
}

/** A body or message that inflates past the limit: 413. */
export function decompressedTooLarge(limit: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `message larger than ${limit} bytes after decompression`, {
    httpStatus: 413,
  });
}

/** A response over the client's `maxResponseBytes`. */
export function responseTooLarge(limit: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `the response is larger than ${limit} bytes`);
}

/** A timeout header that does not parse: 400, legacy 40. */
export function badTimeout(header: string, value: string): RpcError {
  return new RpcError(Code.InvalidArgument, `invalid ${header} value: ${quote(value)}`, { legacyStatus: 40 });
}

/** The client gave up waiting: deadline_exceeded with legacy status 30 ("client side timeout"). */
export function clientSideTimeout(timeoutMs: number): RpcError {
  return new RpcError(Code.DeadlineExceeded, `client side timeout: no response within ${timeoutMs} ms`, {
    legacyStatus: 30,
  });
}

/** The caller's AbortSignal fired: cancelled, with the signal's reason as cause. */
export function callerCancelled(reason?: unknown): RpcError {
  if (reason instanceof RpcError) return reason;
  const text = reason instanceof Error && reason.message ? `: ${reason.message}` : "";
  return new RpcError(Code.Cancelled, `the call was cancelled${text}`, { cause: reason });
}

/**
 * A response that does not match the method's declared result (`@Method({ returns })`): the
 * server's handler returned something else, so `internal`, with the same words whichever
 * protocol carried it.
 */
export function resultMismatch(path: string, cause: unknown): RpcError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new RpcError(Code.Internal, `the response does not match the declared result of ${path}: ${detail}`, { cause });
}
