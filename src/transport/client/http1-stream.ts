// Owns `Http1ResponseStream`, `http1StreamOptions`. A server-streaming call's exchange over
// HTTP/1.1, in the shape of the HTTP/2 client stream the enveloped-message call reads: 'response'
// with the headers (`:status` added), 'data', 'end', 'error', 'close'. Must not change: every bound
// on what a peer can make us hold (docs/security.md).
import { EventEmitter } from "node:events";
import * as http from "node:http";
import * as https from "node:https";
import type * as http2 from "node:http2";
import type { Socket } from "node:net";
import { memoryConnection } from "../memory.js";
import { connectFailure, isConnectErrorCode } from "./errors.js";
import type { Provider } from "./provider.js";

/**
 * A server-streaming call's exchange over HTTP/1.1, in the shape of the HTTP/2 client stream the
 * enveloped-message call reads: 'response' with the headers (`:status` added), 'data', 'end',
 * 'error', 'close'; `end(frame)` sends the one request message. Only what that call uses is here.
 * Connect streams need no trailers, so they run over HTTP/1.1 (a chunked response body).
 */
export class Http1ResponseStream extends EventEmitter {
  /** Never "unprocessed" by HTTP/2's rules (no REFUSED_STREAM, no GOAWAY): failures say what they are. */
  readonly id = 1;
  rstCode = 0;
  readonly session = undefined;
  destroyed = false;
  closed = false;
  writableEnded = false;
  readonly writableLength = 0;
  private res: http.IncomingMessage | undefined = undefined;
  private readonly req: http.ClientRequest;
  private connected = false;

  constructor(options: http.RequestOptions, provider: Provider) {
    super();
    this.req = (options.protocol === "https:" ? https.request : http.request)(options);
    this.req.on("socket", (s: Socket) => {
      if (!s.connecting) this.connected = true;
      else s.once("connect", () => (this.connected = true));
    });
    this.req.on("error", (e) => {
      // Nothing was sent when the connection could not be made: retryable like a refused connection.
      this.emit("error", !this.connected && isConnectErrorCode(e) ? connectFailure(provider.address, e) : e);
    });
    this.req.on("response", (res) => this.onResponse(res));
    this.req.on("close", () => this.onClose());
  }

  private onResponse(res: http.IncomingMessage): void {
    this.res = res;
    this.emit("response", { ...res.headers, ":status": res.statusCode } as http2.IncomingHttpHeaders);
    res.on("data", (c: Buffer) => this.emit("data", c));
    res.on("end", () => this.emit("end"));
    res.on("error", (e) => this.emit("error", e));
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.destroyed = true;
    this.emit("close");
  }

  pause(): void {
    this.res?.pause();
  }

  resume(): void {
    this.res?.resume();
  }

  write(chunk: Uint8Array): boolean {
    return this.req.write(chunk);
  }

  end(chunk?: Uint8Array): void {
    this.writableEnded = true;
    this.req.end(chunk);
  }

  /** Abandons the exchange (the connection is closed: HTTP/1.1 cannot cancel one response). */
  close(code = 8): void {
    if (this.destroyed) return;
    this.rstCode = code;
    this.destroyed = true;
    this.req.destroy();
  }
}

/** The request options of a streaming exchange with `provider` over HTTP/1.1. */
export function http1StreamOptions(provider: Provider, path: string, headers: http.OutgoingHttpHeaders, agent: http.Agent): http.RequestOptions {
  const options: http.RequestOptions = {
    host: provider.host.startsWith("[") ? provider.host.slice(1, -1) : provider.host,
    port: provider.port,
    path,
    method: "POST",
    headers,
    agent,
    protocol: provider.secure ? "https:" : "http:",
  };
  if (provider.memory) {
    options.agent = undefined;
    options.createConnection = () => memoryConnection(provider.host, "1.1") as unknown as Socket;
  }
  return options;
}
