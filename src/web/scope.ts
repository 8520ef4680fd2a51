// Owns `WebScope`, `isNetworkFailure`, `readBody`, `headersOf`. One web call's deadline and
// cancellation: an AbortSignal that fires when the caller's signal does (`cancelled`) or when the
// timeout passes (`deadline_exceeded`), and the … Must not change: no node: import and no server
// code: it runs in browsers (the bundle budget test checks).
import { concatBytes } from "../protocol/bytes.js";
import { Code } from "../protocol/code.js";
import { callerCancelled, clientSideTimeout, responseTooLarge } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";

/**
 * One web call's deadline and cancellation: an AbortSignal that fires when the caller's signal
 * does (`cancelled`) or when the timeout passes (`deadline_exceeded`), and the error the call
 * then ends with, whatever `fetch` or a stream threw at that moment.
 */
export class WebScope {
  // #private: a minifier renames these (it keeps public member names).
  readonly #controller = new AbortController();
  readonly deadline: number | undefined;
  #ended: RpcError | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onAbort: (() => void) | undefined;
  readonly #userSignal: AbortSignal | undefined;

  constructor(timeoutMs: number | undefined, userSignal: AbortSignal | undefined) {
    this.#userSignal = userSignal;
    if (timeoutMs !== undefined) {
      this.deadline = Date.now() + timeoutMs;
      this.#timer = setTimeout(() => this.end(clientSideTimeout(timeoutMs)), timeoutMs);
    }
    if (userSignal) {
      if (userSignal.aborted) this.end(callerCancelled(userSignal.reason));
      else {
        this.#onAbort = () => this.end(callerCancelled(userSignal.reason));
        userSignal.addEventListener("abort", this.#onAbort, { once: true });
      }
    }
  }

  /** Aborted once the call is cancelled or past its deadline. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Milliseconds left before the deadline (at least 1), for the protocol's timeout header; undefined: none. */
  remaining(): number | undefined {
    return this.deadline === undefined ? undefined : Math.max(1, this.deadline - Date.now());
  }

  /** Ends the call with `err` (the first reason wins) and aborts what it is waiting for. */
  end(err: RpcError): void {
    if (this.#ended) return;
    this.#ended = err;
    this.#controller.abort(err);
    this.release();
  }

  /** The call is over: the timer and the caller's signal are let go. */
  release(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#onAbort) this.#userSignal?.removeEventListener("abort", this.#onAbort);
  }

  /**
   * The error a call ends with for something thrown while it ran: the deadline's or the
   * caller's when the scope ended first (fetch throws an AbortError then), an RpcError as it
   * is, anything else `internal` with its message (a bug or an unreadable reply).
   */
  failure(e: unknown): RpcError {
    if (this.#ended) return this.#ended;
    if (e instanceof Error && e.name === "AbortError") return callerCancelled(e);
    return RpcError.from(e, Code.Internal);
  }

  /** A `fetch` that failed: as {@link failure}, but a network failure is `unavailable` naming the URL. */
  fetchFailure(e: unknown, url: string): RpcError {
    if (this.#ended || e instanceof RpcError || (e instanceof Error && e.name === "AbortError")) return this.failure(e);
    const text = e instanceof Error ? e.message : String(e);
    return new RpcError(Code.Unavailable, `cannot reach ${url}: ${text}`, { cause: e });
  }
}

/** A network failure (fetch rejected before a response): the request may or may not have reached a handler. */
export function isNetworkFailure(err: RpcError): boolean {
  return err.code === Code.Unavailable && err.message.startsWith("cannot reach ");
}

/**
 * Reads a whole response body, at most `maxBytes` (`resource_exhausted` past it, the body then
 * cancelled), without trusting Content-Length.
 */
export async function readBody(res: Response, maxBytes: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    n += value.length;
    if (n > maxBytes) {
      void reader.cancel().catch(() => {});
      throw responseTooLarge(maxBytes);
    }
    parts.push(value);
  }
  return parts.length === 0 ? new Uint8Array(0) : concatBytes(parts);
}

/** A response's headers as a plain object (lower-case names; repeated values already joined by fetch). */
export function headersOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}
