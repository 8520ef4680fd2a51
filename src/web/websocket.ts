// Owns `webSocketTransport`. Client- and bidi-streaming calls of the web client over WebSocket
// (Triple over WebSocket, the mapping of Dubbo 3.3 that our server speaks on its own port): the
// `streams` … Must not change: no node: import and no server code: it runs in browsers (the bundle
// budget test checks).
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { errorOfClose, WS_BEARER_PREFIX, WS_END_OF_REQUEST, WS_SUBPROTOCOL } from "../protocol-websocket/wire.js";
import type { WebCallInit, WebHeaders, WebStreamCall, WebStreamTransport } from "./transport.js";

/** Past this many unsent bytes, `send` waits for the browser to hand them to the network. */
const SEND_HIGH_WATER = 256 * 1024;
/** A caller's cancel closes with 4000 + the error's code (4001 cancelled, 4004 deadline exceeded). */
const CANCEL_BASE = 4000;
/** Headers a browser's WebSocket sets itself, or that must not travel in a URL. */
const NOT_IN_QUERY = new Set(["authorization", "user-agent", "cookie", "host", "origin", "connection", "upgrade"]);

/** The options of {@link webSocketTransport}. */
export interface WebSocketTransportOptions {
  /** The WebSocket constructor; default `globalThis.WebSocket` (browsers, Deno, Bun, workers, Node 22+). */
  readonly WebSocket?: typeof WebSocket;
}

/**
 * The handshake URL of a call: `ws:`/`wss:` for `http:`/`https:`, and the call's headers as query
 * parameters (a browser's WebSocket sends no headers of its own; the server reads them as
 * metadata), except credentials, which go as the `bearer.<token>` subprotocol.
 */
function handshakeOf(init: WebCallInit): { url: string; protocols: string[] } {
  const u = new URL(init.url);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  const protocols = [WS_SUBPROTOCOL];
  const headers: WebHeaders = { ...init.headers, "content-type": init.contentType };
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    const bearer = /^Bearer[ \t]+(\S+)$/i.exec(value);
    if (n === "authorization" && bearer) protocols.push(WS_BEARER_PREFIX + bearer[1]);
    else if (!NOT_IN_QUERY.has(n)) u.searchParams.set(n, value);
  }
  return { url: u.toString(), protocols };
}

/** The outcome queue of one call: messages in order, then the end or the error. */
class Responses implements AsyncIterable<Uint8Array> {
  private readonly items: Uint8Array[] = [];
  private outcome: { error: unknown } | undefined = undefined;
  private wake: (() => void) | undefined = undefined;

  push(m: Uint8Array): void {
    if (this.outcome) return;
    this.items.push(m);
    this.notify();
  }

  settle(error: unknown): void {
    if (this.outcome) return;
    this.outcome = { error };
    this.notify();
  }

  get settled(): boolean {
    return this.outcome !== undefined;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    let i = 0;
    for (;;) {
      if (i < this.items.length) {
        const m = this.items[i];
        this.items[i++] = undefined as unknown as Uint8Array;
        if (i > 1024 && i * 2 > this.items.length) {
          this.items.splice(0, i);
          i = 0;
        }
        yield m;
        continue;
      }
      if (this.outcome) {
        if (this.outcome.error !== undefined) throw this.outcome.error;
        return;
      }
      await new Promise<void>((r) => {
        this.wake = r;
      });
    }
  }
}

/** One client- or bidi-streaming call on a browser WebSocket. */
class WebSocketCall implements WebStreamCall {
  readonly responses = new Responses();
  readonly headers: Promise<WebHeaders> = Promise.resolve({});
  readonly trailers: Promise<WebHeaders> = Promise.resolve({});
  private readonly ws: WebSocket;
  private readonly opened: Promise<boolean>;
  private sawOpen = false;

  constructor(
    private readonly init: WebCallInit,
    Ctor: typeof WebSocket,
  ) {
    const { url, protocols } = handshakeOf(init);
    const ws = (this.ws = new Ctor(url, protocols));
    ws.binaryType = "arraybuffer";
    this.opened = new Promise((resolve) => {
      ws.onopen = () => {
        this.sawOpen = true;
        resolve(true);
      };
      ws.onclose = (e) => {
        resolve(false);
        this.onClose(e.code, e.reason);
      };
    });
    ws.onmessage = (e) => this.onMessage(e.data);
    const signal = init.signal;
    if (signal.aborted) this.cancel(signal.reason);
    else signal.addEventListener("abort", () => this.cancel(signal.reason), { once: true });
  }

  private onMessage(data: unknown): void {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : new Uint8Array(data as ArrayBuffer);
    if (typeof data === "string" && bytes.length === 0) return;
    if (bytes.length > this.init.maxBytes) {
      this.fail(
        new RpcError(Code.ResourceExhausted, `a response message of ${bytes.length} bytes is over the limit of ${this.init.maxBytes} (maxResponseBytes)`),
      );
      return;
    }
    this.responses.push(bytes);
  }

  private onClose(code: number, reason: string): void {
    if (!this.sawOpen) {
      // A browser does not say why a handshake failed (status, body): only that it did.
      this.responses.settle(
        new RpcError(
          Code.Unavailable,
          `the WebSocket to ${this.init.method.path} could not be opened (refused: unknown method, credentials, origin, or unreachable; close ${code})`,
        ),
      );
      return;
    }
    this.responses.settle(errorOfClose(code, reason));
  }

  private fail(err: RpcError): void {
    if (this.responses.settled) return;
    this.responses.settle(err);
    if (this.ws.readyState === 0 || this.ws.readyState === 1) this.ws.close(CANCEL_BASE + err.code);
  }

  async send(message: Uint8Array): Promise<boolean> {
    if (!(await this.opened) || this.responses.settled) return false;
    while (this.ws.bufferedAmount > SEND_HIGH_WATER && this.ws.readyState === 1) await new Promise((r) => setTimeout(r, 5));
    if (this.ws.readyState !== 1) return false;
    this.ws.send(message);
    return true;
  }

  end(): void {
    void this.opened.then((open) => {
      if (open && this.ws.readyState === 1) this.ws.send(WS_END_OF_REQUEST);
    });
  }

  cancel(reason?: unknown): void {
    this.fail(reason instanceof RpcError ? reason : new RpcError(Code.Cancelled, "the call was cancelled"));
  }
}

/**
 * Client- and bidi-streaming calls of the web client over WebSocket (Triple over WebSocket, the
 * mapping of Dubbo 3.3 that our server speaks on its own port): the `streams` option of
 * `triple-rpc/web`'s `createClient`. One WebSocket per call; metadata as query parameters, a
 * bearer token as the `bearer.<token>` subprotocol; messages as binary messages; the request
 * side ended by an empty text message; the outcome from the server's close.
 */
export function webSocketTransport(options: WebSocketTransportOptions = {}): WebStreamTransport {
  const Ctor = options.WebSocket ?? (globalThis as { WebSocket?: typeof WebSocket }).WebSocket;
  if (typeof Ctor !== "function") throw new TypeError("webSocketTransport: no WebSocket in this runtime; pass options.WebSocket (e.g. the ws package's)");
  return { name: "websocket", open: (init) => new WebSocketCall(init, Ctor) };
}
