// Owns `WebSocketClientCall`. One call on its own WebSocket (our Node client's `protocol:
// "websocket"`): opened with the call's headers, messages sent as binary messages, the request side
// ended by … Must not change: the framing the web client and the server agree on; bounds on every
// frame.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import type { ClientHttp2Stream } from "node:http2";
import type { ConnectionOptions } from "node:tls";
import type { WebSocket } from "ws";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { CLIENT_QUEUE_BOUNDS, MessageQueue } from "../message/message-queue.js";
import type { MessageCodec } from "../message/codec-types.js";
import { errorFromHttpResponse } from "../protocol-triple/client-reply.js";
import type { ResponseMode, StreamCall } from "../runtime/client-protocol.js";
import { connectFailure, transportError } from "../transport/client/errors.js";
import type { Http2Transport } from "../transport/client/http2.js";
import type { Provider } from "../transport/client/provider.js";
import { webSocketOnStream } from "./over-stream.js";
import { errorOfClose, WS_END_OF_REQUEST } from "./wire.js";
import { wsPackage } from "./ws-package.js";

/** ws's `readyState` values (the WebSocket standard's). */
const CONNECTING = 0;
const OPEN = 1;

/** A caller's cancel: close code 4000 + the error's code (4001 cancelled, 4004 deadline exceeded); the server sees a reset. */
const CANCEL_BASE = 4000;
/** Past this many unsent bytes, `send` waits for them to leave. */
const SEND_HIGH_WATER = 256 * 1024;

/** Settings of one WebSocket call. */
export interface WsCallSettings {
  readonly codec: MessageCodec;
  readonly maxBytes: number;
  readonly signal: AbortSignal;
  readonly tls: ConnectionOptions | undefined;
  /** How the request side ends: the empty text message, or a close with 1000 (Dubbo Java's end). */
  readonly end: "message" | "close";
}

/**
 * One call on its own WebSocket (our Node client's `protocol: "websocket"`): opened with the
 * call's headers, messages sent as binary messages, the request side ended by the empty text
 * message, the outcome read from the server's close (1000, or the code named in the reason).
 */
export class WebSocketClientCall implements StreamCall {
  readonly responses: MessageQueue<unknown> | undefined;
  private value: unknown = undefined;
  private count = 0;
  private done = false;
  private stop: (() => void) | undefined = undefined;
  private corked = false;
  private readonly outcome: Promise<unknown>;
  private resolveResult!: (v: unknown) => void;
  private rejectResult!: (e: unknown) => void;

  private constructor(
    private readonly ws: WebSocket,
    private readonly settings: WsCallSettings,
    mode: ResponseMode,
  ) {
    this.outcome = new Promise((res, rej) => {
      this.resolveResult = res;
      this.rejectResult = rej;
    });
    // Unobserved in stream mode: the queue carries the outcome there.
    this.outcome.catch(() => {});
    this.responses =
      mode === "stream"
        ? new MessageQueue(
            (pause) => (pause ? ws.pause() : ws.resume()),
            CLIENT_QUEUE_BOUNDS,
            () => this.cancel(),
          )
        : undefined;
    ws.on("message", (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on("close", (code, reason) => this.onClose(code, reason.toString()));
    const signal = settings.signal;
    if (!signal.aborted) signal.addEventListener("abort", () => this.cancel(signal.reason), { once: true });
  }

  /** Opens the call's WebSocket; resolves once the handshake succeeded, rejects with the server's HTTP error otherwise. */
  static open(p: Provider, path: string, headers: OutgoingHttpHeaders, settings: WsCallSettings, mode: ResponseMode): Promise<WebSocketClientCall> {
    const url = `${p.secure ? "wss" : "ws"}://${p.host.includes(":") ? `[${p.host}]` : p.host}:${p.port}${path}`;
    // No subprotocol offered: ws fails a handshake whose answer selects none ("Server sent no
    // subprotocol"), and Dubbo Java's WebSocket transport selects none. Headers carry everything.
    const ws = new (wsPackage().WebSocket)(url, [], {
      headers: headers as Record<string, string>,
      maxPayload: settings.maxBytes,
      perMessageDeflate: false,
      ...settings.tls,
    });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new WebSocketClientCall(ws, settings, mode)));
      ws.once("unexpected-response", (_req, res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => reject(errorFromHttpResponse(res.statusCode ?? 0, res.headers, Buffer.concat(chunks))));
        res.on("error", (e) => reject(connectFailure(p.address, e)));
      });
      ws.once("error", (e) => reject(settings.signal.aborted ? settings.signal.reason : connectFailure(p.address, e)));
      if (settings.signal.aborted) ws.terminate();
      else settings.signal.addEventListener("abort", () => ws.readyState === CONNECTING && ws.terminate(), { once: true });
    });
  }

  /**
   * Opens the call as an HTTP/2 extended CONNECT (RFC 8441) on the provider's pooled session:
   * resolves once the server answered 200, rejects with the server's HTTP error otherwise;
   * undefined when the server does not advertise SETTINGS_ENABLE_CONNECT_PROTOCOL.
   */
  static async openOverHttp2(
    h2: Http2Transport,
    p: Provider,
    path: string,
    headers: OutgoingHttpHeaders,
    settings: WsCallSettings,
    mode: ResponseMode,
  ): Promise<WebSocketClientCall | undefined> {
    const authority = `${p.host.includes(":") ? `[${p.host}]` : p.host}:${p.port}`;
    const connect: OutgoingHttpHeaders = {
      ...headers,
      ":method": "CONNECT",
      ":protocol": "websocket",
      ":scheme": p.secure ? "https" : "http",
      ":authority": authority,
      ":path": path,
      "sec-websocket-version": "13",
    };
    const stream = await h2.openExtendedConnect(p, connect, settings.signal);
    if (stream === undefined) return undefined;
    const head = await responseHead(stream, p, settings.signal);
    const status = Number(head[":status"]);
    if (status !== 200) throw errorFromHttpResponse(status, head, await readAll(stream));
    const ws = webSocketOnStream(wsPackage(), stream, { server: false, maxPayload: settings.maxBytes, protocol: String(head["sec-websocket-protocol"] ?? "") });
    return new WebSocketClientCall(ws, settings, mode);
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.done || (!isBinary && data.length === 0)) return;
    let value: unknown;
    try {
      value = this.settings.codec.decodeResponse(data);
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.responses) this.responses.push(value, data.length);
    else if (++this.count > 1) this.fail(new RpcError(Code.Unimplemented, "protocol error: more than one response message for a unary method"));
    else this.value = value;
  }

  private onClose(code: number, reason: string): void {
    if (this.done) return;
    const err = errorOfClose(code, reason);
    if (err) {
      this.fail(err);
      return;
    }
    if (!this.responses && this.count === 0) {
      this.fail(new RpcError(Code.Internal, "protocol error: the server closed 1000 without a response message"));
      return;
    }
    this.done = true;
    if (this.responses) this.responses.end();
    else this.resolveResult(this.value);
    this.stop?.();
  }

  /** Ends the call with `err`: a server's error (`local` false: messages already here are still read) or the caller's. */
  private fail(err: unknown, local = false): void {
    if (this.done) return;
    this.done = true;
    if (this.responses && local) this.responses.abort(err);
    else if (this.responses) this.responses.fail(err);
    else this.rejectResult(err);
    if (this.ws.readyState === OPEN) this.ws.close(CANCEL_BASE + (err instanceof RpcError ? err.code : Code.Cancelled));
    this.stop?.();
  }

  result(): Promise<unknown> {
    return this.outcome;
  }

  sendArgs(payload: Uint8Array): void {
    if (!this.done) this.ws.send(payload, { binary: true });
  }

  async send(value: unknown): Promise<boolean> {
    if (this.done || this.ws.readyState !== OPEN) return false;
    const bytes = this.settings.codec.encodeRequest(value);
    if (this.ws.bufferedAmount < SEND_HIGH_WATER) {
      this.corkTick();
      this.ws.send(bytes, { binary: true });
      return true;
    }
    await new Promise<void>((resolve) => this.ws.send(bytes, { binary: true }, () => resolve()));
    return !this.done;
  }

  /** The messages sent in one turn of the event loop leave in one write (ws writes header and payload apart). */
  private corkTick(): void {
    const socket = (this.ws as unknown as { _socket?: import("node:net").Socket })._socket;
    if (this.corked || socket === undefined) return;
    this.corked = true;
    socket.cork();
    process.nextTick(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  end(): void {
    if (this.done || this.ws.readyState !== OPEN) return;
    // After its own close, ws still reads the messages that arrive before the server's close.
    if (this.settings.end === "close") this.ws.close(1000);
    else this.ws.send(WS_END_OF_REQUEST, { binary: false });
  }

  cancel(reason?: unknown): void {
    this.fail(reason instanceof RpcError ? reason : new RpcError(Code.Cancelled, "the call was cancelled"), true);
  }

  onSettled(stop: () => void): void {
    if (this.done) stop();
    else this.stop = stop;
  }
}

/** The response headers of an extended CONNECT; rejects when the stream fails or closes first. */
function responseHead(stream: ClientHttp2Stream, p: Provider, signal: AbortSignal): Promise<IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    stream.once("response", (h) => resolve(h as IncomingHttpHeaders));
    stream.once("error", (e) => reject(signal.aborted ? signal.reason : transportError(p.address, e, false)));
    stream.once("close", () =>
      reject(
        signal.aborted ? signal.reason : transportError(p.address, new Error("the stream closed before the server answered the WebSocket CONNECT"), false),
      ),
    );
  });
}

/** The body of a refused extended CONNECT (the server's error JSON), at most 64 KiB of it. */
function readAll(stream: ClientHttp2Stream): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on("data", (c: Buffer) => {
      if (size < 65_536) chunks.push(c);
      size += c.length;
    });
    stream.once("end", () => resolve(Buffer.concat(chunks)));
    stream.once("close", () => resolve(Buffer.concat(chunks)));
  });
}
