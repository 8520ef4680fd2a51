// Owns `WebSocketExchange`. One WebSocket call seen as an Exchange, so the enveloped server call
// that serves gRPC, gRPC-Web and Connect streams serves it too (limits, backpressure, deadline, …
// Must not change: the framing the web client and the server agree on; bounds on every frame.
import type { Duplex, Readable } from "node:stream";
import type { WebSocket } from "ws";
import { type AbortSink, type BodySink, chainAbortSink, type Exchange, type OutHeaders, type Peer } from "../transport/server/exchange.js";
import { WS_CLOSE } from "./wire.js";

type Headers = Record<string, string | string[] | undefined>;

/** What a message becomes on the way in: the gRPC frame its call's reader expects (flag 0, 4-byte length). */
function envelope(data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(5 + data.length);
  out[0] = 0;
  out.writeUInt32BE(data.length, 1);
  data.copy(out, 5);
  return out;
}

function uncork(ex: WebSocketExchange): void {
  ex.uncork();
}

function asBuffer(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/**
 * One WebSocket call seen as an {@link Exchange}, so the enveloped server call that serves gRPC,
 * gRPC-Web and Connect streams serves it too (limits, backpressure, deadline, interceptors,
 * telemetry, shutdown): each message goes to the call's reader as one gRPC frame; an empty text
 * message or a close 1000 ends the request body; any other close, or the connection going away
 * before the call ended, is an abort. Pausing the body pauses the socket (TCP backpressure).
 */
export class WebSocketExchange implements Exchange {
  /** The handshake's method: an HTTP/1.1 upgrade's GET, or HTTP/2's extended CONNECT. */
  readonly method: "GET" | "CONNECT";
  headers: Headers;
  readonly headerCount: number;
  readonly body: Readable;
  aborted = false;
  /** True once the server closed (the call ended on our side). */
  closed = false;
  private sink: BodySink | undefined = undefined;
  private abortSink: AbortSink | undefined = undefined;
  private pending: Buffer[] | undefined = [];
  private bodyEnded = false;
  private messages = 0;
  private idleTimer: NodeJS.Timeout | undefined = undefined;
  private lastMessage = Date.now();
  private corked = false;
  private endCode: number = WS_CLOSE.normal;
  private endReason: string | undefined = undefined;

  constructor(
    readonly ws: WebSocket,
    /** The upgraded socket (HTTP/1.1), or the extended CONNECT's stream (HTTP/2). */
    private readonly socket: Duplex,
    readonly path: string,
    readonly query: string | undefined,
    headers: Headers,
    readonly peer: Peer,
    /** Unary and server-streaming calls: the request side ends with the first message (as Dubbo's autoClose). */
    private readonly singleMessage: boolean,
    /** No message for this long while the request side is open closes the call with 1008; 0: never. */
    private readonly idleMs: number,
    readonly httpVersion: "1.1" | "2" = "1.1",
  ) {
    this.method = httpVersion === "2" ? "CONNECT" : "GET";
    this.headers = headers;
    this.headerCount = Object.keys(headers).length;
    this.body = { pause: () => ws.pause(), resume: () => ws.resume() } as unknown as Readable;
    ws.on("message", (data, isBinary) => this.onMessage(asBuffer(data as Buffer), isBinary));
    ws.on("close", (code) => this.onClose(code));
    ws.on("error", () => {});
    if (idleMs > 0) {
      this.idleTimer = setInterval(() => this.checkIdle(), Math.max(50, Math.floor(idleMs / 4)));
      this.idleTimer.unref();
    }
  }

  /** A request side open and silent for `idleMs`: the call is closed with 1008 and cancelled. */
  private checkIdle(): void {
    if (this.bodyEnded || this.closed) {
      clearInterval(this.idleTimer);
      return;
    }
    if (Date.now() - this.lastMessage < this.idleMs) return;
    this.close(WS_CLOSE.policy, `no message for ${this.idleMs} ms (bodyIdleTimeoutMs); send the end-of-request message or close 1000 when done`);
    this.aborted = true;
    this.abortSink?.onExchangeAbort();
  }

  get headersSent(): boolean {
    return true;
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.bodyEnded) return;
    if (!isBinary && data.length === 0) {
      this.endBody();
      return;
    }
    this.lastMessage = Date.now();
    const frame = envelope(data);
    if (this.sink) this.sink.onBodyData(frame);
    else this.pending?.push(frame);
    if (this.singleMessage && ++this.messages === 1) this.endBody();
  }

  private endBody(): void {
    if (this.bodyEnded) return;
    this.bodyEnded = true;
    if (this.sink) this.sink.onBodyEnd();
    // The call no longer asks for pauses once its request side ended: read on, for the close frame.
    if (this.ws.isPaused) this.ws.resume();
  }

  /** The client's close frame (1000 ends the request side, any other code cancels) or the connection lost. */
  private onClose(code: number): void {
    if (code === WS_CLOSE.normal && !this.closed) this.endBody();
    clearInterval(this.idleTimer);
    if (this.closed) return;
    this.closed = true;
    this.aborted = true;
    this.abortSink?.onExchangeAbort();
  }

  /** Every sink is told (the access log's and the call's). */
  onAbort(fn: (() => void) | AbortSink): void {
    this.abortSink = chainAbortSink(this.abortSink, fn);
  }

  readBody(sink: BodySink): void {
    this.sink = sink;
    const pending = this.pending ?? [];
    this.pending = undefined;
    for (const f of pending) sink.onBodyData(f);
    if (this.bodyEnded) sink.onBodyEnd();
  }

  releaseHeaders(): void {
    this.headers = {};
  }

  /**
   * Sends one message; false when the socket's buffer is full (wait for {@link onDrain}). The
   * messages a handler yields in one turn of the event loop leave in one write: the socket is
   * corked at the first and uncorked on the next tick (ws writes each message's header and
   * payload separately, a system call each otherwise).
   */
  write(chunk: Uint8Array | string): boolean {
    if (this.closed) return true;
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(uncork, this);
    }
    this.ws.send(chunk, { binary: typeof chunk !== "string" });
    return !this.socket.writableNeedDrain;
  }

  /** @internal */
  uncork(): void {
    this.corked = false;
    this.socket.uncork();
  }

  onDrain(fn: () => void): void {
    if (this.closed || !this.socket.writableNeedDrain) queueMicrotask(fn);
    else this.socket.once("drain", fn);
  }

  /** Ends the call from the server: close 1000, or the error's code and reason. */
  close(code: number, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    this.bodyEnded = true;
    clearInterval(this.idleTimer);
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
  }

  /** An answer before any message (not used by WebSocket calls, which end with a close): 1000 or 1011. */
  respond(status: number, _headers: OutHeaders, _body?: Uint8Array | string): void {
    this.close(status < 400 ? WS_CLOSE.normal : WS_CLOSE.internal, status < 400 ? undefined : `HTTP ${status}`);
  }

  /** The handshake's status: 101 (HTTP/1.1 upgrade), or the 200 of an extended CONNECT (RFC 8441). */
  get handshakeStatus(): number {
    return this.httpVersion === "2" ? 200 : 101;
  }

  /** The handshake's answer (already sent): lets observers of the exchange see the status. */
  start(_status?: number, _headers?: OutHeaders, _trailers?: boolean): void {}

  /** Ends the call with close 1000, or with the code {@link endWith} gave. */
  end(): void {
    this.close(this.endCode, this.endReason);
  }

  /** Ends the call with `code` and `reason`, through {@link end} (which observers of the exchange watch). */
  endWith(code: number, reason?: string): void {
    this.endCode = code;
    this.endReason = reason;
    this.end();
  }

  reset(): void {
    this.close(WS_CLOSE.internal, "reset");
  }

  discardBody(): void {}

  streamingBody(): void {}
}
