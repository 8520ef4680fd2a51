import * as http from "node:http";
import * as https from "node:https";
import type { Socket } from "node:net";
import { NEVER_ABORTS } from "../../client/call-scope.js";
import type { Provider } from "../../client/provider.js";
import { responseTooLarge } from "../../protocol/errors.js";
import { connectFailure, isConnectErrorCode, transportError } from "./errors.js";
import type { HttpReply, TransportSettings, UnaryRequest, UnaryTransport } from "./unary-transport.js";
import { H } from "../../protocol/headers.js";

/**
 * One POST over HTTP/1.1 and its settling: the response collected up to `maxBytes`, the caller's
 * signal, a connect timeout while the socket is still connecting, and errors classified as
 * connect failures (nothing was sent) or broken connections.
 */
class Http1Post {
  private connected = false;
  private settled = false;
  private connectTimer: NodeJS.Timeout | undefined = undefined;
  readonly req: http.ClientRequest;
  private readonly onAbort = () => {
    this.req.destroy();
    this.finish(this.signal.reason);
  };

  constructor(
    options: http.RequestOptions,
    private readonly provider: Provider,
    private readonly signal: AbortSignal,
    private readonly maxBytes: number,
    private readonly connectTimeoutMs: number,
    private readonly resolve: (reply: HttpReply) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.req = (provider.secure ? https : http).request(options, (res) => this.onResponse(res));
    if (signal !== NEVER_ABORTS) signal.addEventListener("abort", this.onAbort, { once: true });
    this.req.on("socket", (s: Socket) => this.onSocket(s));
    this.req.on("error", (e) => this.onError(e));
  }

  private finish(err: unknown, reply?: HttpReply): void {
    if (this.settled) return;
    this.settled = true;
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.signal.removeEventListener("abort", this.onAbort);
    if (err) this.reject(err);
    else this.resolve(reply as HttpReply);
  }

  private onResponse(res: http.IncomingMessage): void {
    const chunks: Buffer[] = [];
    let size = 0;
    if (Number(res.headers[H.contentLength]) > this.maxBytes) {
      this.tooLarge();
      return;
    }
    res.on("data", (c: Buffer) => {
      size += c.length;
      if (size > this.maxBytes) return this.tooLarge();
      chunks.push(c);
    });
    res.on("end", () =>
      this.finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, size) }),
    );
    res.on("error", (e) => this.finish(this.signal.aborted ? this.signal.reason : transportError(this.provider.address, e)));
  }

  private tooLarge(): void {
    this.req.destroy();
    this.finish(responseTooLarge(this.maxBytes));
  }

  private onSocket(s: Socket): void {
    if (!s.connecting) {
      this.connected = true;
      return;
    }
    this.connectTimer = setTimeout(() => {
      const e = Object.assign(new Error(`connect timed out after ${this.connectTimeoutMs} ms`), { code: "ETIMEDOUT" });
      this.req.destroy(e);
    }, this.connectTimeoutMs);
    s.once(this.provider.secure ? "secureConnect" : "connect", () => {
      this.connected = true;
      if (this.connectTimer) clearTimeout(this.connectTimer);
    });
  }

  private onError(e: Error): void {
    if (this.signal.aborted) {
      this.finish(this.signal.reason);
      return;
    }
    const address = this.provider.address;
    this.finish(!this.connected && isConnectErrorCode(e) ? connectFailure(address, e) : transportError(address, e));
  }
}

/** HTTP/1.1 connections per provider: calls beyond it wait for a free one. */
const SOCKETS_PER_PROVIDER = 128;

/**
 * Triple HTTP unary over HTTP/1.1: one keep-alive agent per client, so consecutive calls to a
 * provider reuse its sockets instead of paying a TCP (and TLS) handshake each.
 */
export class Http1Transport implements UnaryTransport {
  private readonly agent: http.Agent;
  private readonly tlsAgent: https.Agent;

  constructor(private readonly settings: TransportSettings) {
    // As many idle sockets kept as may be busy: a smaller free pool would close sockets after
    // every burst and open new ones for the next (connection churn under load).
    this.agent = new http.Agent({ keepAlive: true, maxSockets: SOCKETS_PER_PROVIDER, maxFreeSockets: SOCKETS_PER_PROVIDER });
    this.tlsAgent = new https.Agent({
      keepAlive: true,
      maxSockets: SOCKETS_PER_PROVIDER,
      maxFreeSockets: SOCKETS_PER_PROVIDER,
      ...settings.tls,
    });
  }

  post(provider: Provider, req: UnaryRequest): Promise<HttpReply> {
    const { path, headers, body, signal, maxBytes } = req;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const options: http.RequestOptions = {
        host: provider.host.startsWith("[") ? provider.host.slice(1, -1) : provider.host,
        port: provider.port,
        path,
        method: "POST",
        headers: { ...headers, [H.contentLength]: body.byteLength },
        agent: provider.secure ? this.tlsAgent : this.agent,
      };
      const post = new Http1Post(options, provider, signal, maxBytes, this.settings.connectTimeoutMs, resolve, reject);
      post.req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
    this.tlsAgent.destroy();
  }
}
