// Owns `Http1Transport`, `whenConnected`. Triple HTTP unary over HTTP/1.1: one keep-alive agent per
// client, so consecutive calls to a provider reuse its sockets instead of paying a TCP (and TLS)
// handshake each. Must not change: every bound on what a peer can make us hold (docs/security.md).
import * as http from "node:http";
import * as https from "node:https";
import type { Socket } from "node:net";
import { responseTooLarge } from "../../protocol/errors.js";
import { H } from "../../protocol/headers.js";
import { memoryConnection } from "../memory.js";
import { NEVER_ABORTS } from "./call-scope.js";
import { connectFailure, isConnectErrorCode, transportError } from "./errors.js";
import { Http1ResponseStream, http1StreamOptions } from "./http1-stream.js";
import type { Provider } from "./provider.js";
import type { HttpReply, TransportSettings, UnaryRequest, UnaryTransport } from "./unary-transport.js";

/** The post of a request and of its response, set once: their listeners are shared by every post. */
const kPost = Symbol("triple.h1post");
type Tagged<T> = T & { [kPost]: Http1Post };

function onRequestSocket(this: Tagged<http.ClientRequest>, s: Socket): void {
  this[kPost].onSocket(s);
}
function onRequestError(this: Tagged<http.ClientRequest>, e: Error): void {
  this[kPost].onError(e);
}
function onRequestResponse(this: Tagged<http.ClientRequest>, res: http.IncomingMessage): void {
  this[kPost].onResponse(res);
}
function onResponseData(this: Tagged<http.IncomingMessage>, c: Buffer): void {
  this[kPost].onData(c);
}
function onResponseEnd(this: Tagged<http.IncomingMessage>): void {
  this[kPost].onEnd();
}
function onResponseError(this: Tagged<http.IncomingMessage>, e: Error): void {
  this[kPost].onResponseError(e);
}

/**
 * One POST over HTTP/1.1 and its settling: the response collected up to `maxBytes`, the caller's
 * signal, a connect timeout while the socket is still connecting, and errors classified as
 * connect failures (nothing was sent) or broken connections.
 */
class Http1Post {
  private connected = false;
  /** The request's socket and the bytes it had handed to the OS when the request got it. */
  private socket: Socket | undefined = undefined;
  private dispatchedBefore = -1;
  private settled = false;
  private connectTimer: NodeJS.Timeout | undefined = undefined;
  private res: http.IncomingMessage | undefined = undefined;
  private first: Buffer | undefined = undefined;
  private chunks: Buffer[] | undefined = undefined;
  private size = 0;
  private onAbort: (() => void) | undefined = undefined;
  readonly req: http.ClientRequest;

  constructor(
    options: http.RequestOptions,
    private readonly provider: Provider,
    private readonly signal: AbortSignal,
    private readonly maxBytes: number,
    private readonly connectTimeoutMs: number,
    private readonly resolve: (reply: HttpReply) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    const req = (this.req = (provider.secure ? https : http).request(options));
    (req as Tagged<http.ClientRequest>)[kPost] = this;
    req.on("response", onRequestResponse);
    req.on("socket", onRequestSocket);
    req.on("error", onRequestError);
    if (signal !== NEVER_ABORTS) {
      this.onAbort = () => {
        this.req.destroy();
        this.finish(this.signal.reason);
      };
      signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  private finish(err: unknown, reply?: HttpReply): void {
    if (this.settled) return;
    this.settled = true;
    if (this.connectTimer) clearTimeout(this.connectTimer);
    if (this.onAbort) this.signal.removeEventListener("abort", this.onAbort);
    if (err) this.reject(err);
    else this.resolve(reply as HttpReply);
  }

  onResponse(res: http.IncomingMessage): void {
    if (Number(res.headers[H.contentLength]) > this.maxBytes) {
      this.tooLarge();
      return;
    }
    this.res = res;
    (res as Tagged<http.IncomingMessage>)[kPost] = this;
    res.on("data", onResponseData);
    res.on("end", onResponseEnd);
    res.on("error", onResponseError);
  }

  onData(c: Buffer): void {
    this.size += c.length;
    if (this.size > this.maxBytes) {
      this.tooLarge();
      return;
    }
    if (this.first === undefined) this.first = c;
    else (this.chunks ??= [this.first]).push(c);
  }

  onEnd(): void {
    const res = this.res!;
    const body = this.chunks ? Buffer.concat(this.chunks, this.size) : (this.first ?? EMPTY);
    this.finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body });
  }

  onResponseError(e: Error): void {
    this.finish(this.signal.aborted ? this.signal.reason : transportError(this.provider.address, e));
  }

  private tooLarge(): void {
    this.req.destroy();
    this.finish(responseTooLarge(this.maxBytes));
  }

  onSocket(s: Socket): void {
    // 'socket' comes before node flushes the request onto the socket.
    this.socket = s;
    this.dispatchedBefore = dispatched(s);
    const already = whenConnected(s, this.provider.secure, () => {
      this.connected = true;
      if (this.connectTimer) clearTimeout(this.connectTimer);
    });
    if (already) return;
    this.connectTimer = setTimeout(() => {
      const e = Object.assign(new Error(`connect timed out after ${this.connectTimeoutMs} ms`), { code: "ETIMEDOUT" });
      this.req.destroy(e);
    }, this.connectTimeoutMs);
  }

  onError(e: Error): void {
    if (this.settled) return;
    if (this.signal.aborted) {
      this.finish(this.signal.reason);
      return;
    }
    const address = this.provider.address;
    this.finish(!this.connected && isConnectErrorCode(e) ? connectFailure(address, e) : transportError(address, e, this.requestMayHaveLeft()));
  }

  /**
   * False only when no byte of this request reached the OS: the socket failed before node
   * flushed the request onto it (a reused keep-alive socket the server closed just before). A
   * socket that took any byte of it may have delivered the request to a handler.
   */
  private requestMayHaveLeft(): boolean {
    const s = this.socket;
    if (s === undefined) return false; // no socket yet: nothing written
    const now = dispatched(s);
    return this.dispatchedBefore < 0 || now < 0 || now !== this.dispatchedBefore;
  }
}

/**
 * The bytes a socket handed to the OS (`_bytesDispatched`: the handle's count, kept after the
 * socket closed); -1 where node does not tell, which counts as "may have been sent".
 */
function dispatched(s: Socket): number {
  const n = (s as Socket & { _bytesDispatched?: unknown })._bytesDispatched;
  return typeof n === "number" ? n : -1;
}

const EMPTY = Buffer.alloc(0);

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
      if (provider.memory) {
        // An in-process server (memory://): one in-memory connection per request, no pool.
        options.agent = undefined;
        options.createConnection = () => memoryConnection(provider.host, "1.1") as unknown as Socket;
      }
      const post = new Http1Post(options, provider, signal, maxBytes, this.settings.connectTimeoutMs, resolve, reject);
      post.req.end(body);
    });
  }

  /**
   * Opens a server-streaming exchange (Connect streams) on the client's keep-alive agents: the
   * response is read as it arrives, in the shape of an HTTP/2 client stream.
   */
  openStream(provider: Provider, path: string, headers: http.OutgoingHttpHeaders): Http1ResponseStream {
    return new Http1ResponseStream(http1StreamOptions(provider, path, headers, provider.secure ? this.tlsAgent : this.agent), provider);
  }

  close(): void {
    this.agent.destroy();
    this.tlsAgent.destroy();
  }
}

/**
 * Runs `then` once the socket is connected (after the TLS handshake when `secure`): at once when
 * it already is (a reused keep-alive socket), which the result tells.
 */
export function whenConnected(s: Socket, secure: boolean, then: () => void): boolean {
  if (!s.connecting) {
    then();
    return true;
  }
  s.once(secure ? "secureConnect" : "connect", then);
  return false;
}
