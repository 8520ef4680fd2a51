// Owns `AccessLog`. The server's access log (`accessLog` option): one line per call when it ends,
// and one per request refused before a handler (400, 404, 413, 415, 431, …). Off by default. Must
// not change: the OpenTelemetry names, and no cost per call when telemetry is off.
import { Code, codeName } from "../protocol/code.js";
import type { RpcError } from "../protocol/rpc-error.js";
import type { CallObserver } from "../runtime/call-observer.js";
import type { Exchange, Responder } from "../transport/server/exchange.js";
import type { Logger } from "../runtime/logger.js";

/** The fields of one access-log line. */
interface AccessLogFields {
  /** The HTTP method (`POST`, `GET`); absent for a request the server could not parse. */
  method?: string;
  /** The request path (`/pkg.Service/Method`); absent for a request the server could not parse. */
  path?: string;
  /** `triple`, `grpc`, `grpc-web`, `connect`, `mcp`, or `http` for a request refused before a protocol was chosen. */
  protocol: string;
  /** The HTTP status sent; absent when no response was sent (the caller went away first). */
  status?: number;
  /** The call's status code (`ok`, `not_found`, `unavailable`, …). */
  code: string;
  /**
   * From the request's headers to the end of the response (its last byte handed to the
   * connection, or the call's end if that is later), ms (0 for a call refused at its headers).
   */
  durationMs: number;
  /** Request message bytes as they arrived (compressed when compressed; framing left out). */
  bytesIn: number;
  /**
   * Response body bytes written (compressed when compressed; the message framing of gRPC,
   * gRPC-Web and Connect streams included): a download's every byte, an error body.
   */
  bytesOut: number;
  /** The caller's `address:port`. */
  peer: string;
}

/**
 * Where access lines go: `true` writes pino-shaped JSON lines to stdout (`{"level":30,"time":…,
 * "msg":…, …fields}`); a {@link Logger} (pino's) gets `info(fields, msg)` for each line.
 */
export type AccessLogOption = boolean | Logger;

/** pino's number for `info`. */
const INFO = 30;

/** The sink of `accessLog: true`: one JSON line per call on stdout, pino's shape. */
const stdoutLines: Pick<Logger, "info"> = {
  info(fields: object, msg: string): void {
    process.stdout.write(`${JSON.stringify({ level: INFO, time: Date.now(), msg, ...fields })}\n`);
  },
};

/** The bytes of a body as sent. */
function sizeOf(body: Uint8Array | string | undefined): number {
  if (body === undefined) return 0;
  return typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
}

/** What a line is being gathered from: the status the responder sends, and the bytes. */
interface Tally {
  status: number | undefined;
  bytesIn: number;
  bytesOut: number;
}

/**
 * Records the status a responder sends (its `respond` or `start`) and the body bytes it writes
 * (`respond`, `write`, `end`); `done` runs once the response is complete (`respond`, `end`) or
 * abandoned (`reset`). Only while the access log is on: the methods are wrapped on the instance.
 */
function watchResponse(r: Responder, tally: Tally, done?: () => void): void {
  const { respond, end, reset } = r;
  r.respond = (status, headers, body) => {
    tally.status = status;
    tally.bytesOut += sizeOf(body);
    respond.call(r, status, headers, body);
    done?.();
  };
  r.end = (trailers, last) => {
    tally.bytesOut += sizeOf(last);
    end.call(r, trailers, last);
    done?.();
  };
  r.reset = () => {
    reset.call(r);
    done?.();
  };
  const ex = r as Partial<Exchange>;
  const { start, write } = ex;
  if (typeof start === "function") {
    ex.start = (status, headers, trailers) => {
      tally.status = status;
      start.call(r, status, headers, trailers);
    };
  }
  if (typeof write === "function") {
    ex.write = (chunk) => {
      tally.bytesOut += sizeOf(chunk);
      return write.call(r, chunk);
    };
  }
}

/**
 * The server's access log (`accessLog` option): one line per call when it ends, and one per
 * request refused before a handler (400, 404, 413, 415, 431, …). Off by default; when off the
 * server never builds one, so calls pay nothing.
 */
export class AccessLog {
  private readonly sink: Pick<Logger, "info">;

  constructor(option: true | Logger) {
    this.sink = option === true ? stdoutLines : option;
  }

  /** Starts a call's line; the returned observer (wrapping the telemetry's, if any) writes it when the call ends. */
  observe(ex: Exchange, protocol: string, inner: CallObserver | undefined): CallObserver {
    return new AccessLogObserver(this, ex, protocol, inner);
  }

  /**
   * A request refused before a handler: its line is written once the protocol has answered it
   * (in the same tick), with the status it sent.
   */
  refused(r: Responder, protocol: string, err: RpcError): void {
    const tally: Tally = { status: undefined, bytesIn: 0, bytesOut: 0 };
    watchResponse(r, tally);
    queueMicrotask(() => this.write(r, protocol, tally, err.code, 0));
  }

  /** Writes one line. */
  write(r: Responder, protocol: string, tally: Tally, code: Code, durationMs: number): void {
    const ex = r as Partial<Exchange>;
    const peer = ex.peer ? `${ex.peer.address}:${ex.peer.port}` : undefined;
    const fields: AccessLogFields = {
      method: ex.method,
      path: ex.path,
      protocol,
      status: tally.status,
      code: codeName(code),
      durationMs: Math.round(durationMs * 1000) / 1000,
      bytesIn: tally.bytesIn,
      bytesOut: tally.bytesOut,
      peer: peer ?? "",
    };
    const msg = `${fields.method ?? "-"} ${fields.path ?? "-"} ${protocol} ${fields.status ?? "-"} ${fields.code} ${fields.durationMs}ms`;
    this.sink.info(fields, msg);
  }
}

/**
 * One call's access line: counts its bytes, then writes the line once the call has ended and its
 * response is complete (a download streams on after its handler returned) or abandoned.
 */
class AccessLogObserver implements CallObserver {
  private readonly startedAt = performance.now();
  private readonly tally: Tally = { status: undefined, bytesIn: 0, bytesOut: 0 };
  /** The call's end: undefined until then, then its error (null for ok). */
  private outcome: RpcError | null | undefined = undefined;
  private responded = false;
  private written = false;

  constructor(
    private readonly log: AccessLog,
    private readonly ex: Exchange,
    private readonly protocol: string,
    private readonly inner: CallObserver | undefined,
  ) {
    const finished = () => {
      this.responded = true;
      this.flush();
    };
    watchResponse(ex, this.tally, finished);
    ex.onAbort(finished);
  }

  within<A extends unknown[]>(fn: (...args: A) => void, ...args: A): void {
    if (this.inner === undefined) fn(...args);
    else this.inner.within(fn, ...args);
  }

  received(bytes: number): void {
    this.tally.bytesIn += bytes;
    this.inner?.received(bytes);
  }

  sent(bytes: number): void {
    this.inner?.sent(bytes);
  }

  end(error: RpcError | undefined): void {
    this.inner?.end(error);
    this.outcome = error ?? null;
    // The protocols end a call and then send its answer in the same tick: wait for it.
    queueMicrotask(() => this.flush());
  }

  /** Writes the line once both the call and its response are over. */
  private flush(): void {
    if (this.written || this.outcome === undefined || (!this.responded && !this.ex.aborted)) return;
    this.written = true;
    const durationMs = performance.now() - this.startedAt;
    const code = this.outcome === null ? Code.OK : this.outcome.code;
    this.log.write(this.ex, this.protocol, this.tally, code, durationMs);
  }
}
