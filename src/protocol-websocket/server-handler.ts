// Owns `WebSocketHandler`. Triple over WebSocket on the server (Dubbo 3.3's mapping,
// docs/protocol.md): an HTTP/1.1 `Upgrade: websocket` GET or an HTTP/2 extended CONNECT (RFC 8441)
// to a method's path, both through one pre-upgrade check and one exchange. Must not change: the
// framing the web client and the server agree on; bounds on every frame.
import type { IncomingMessage } from "node:http";
import type { ServerHttp2Stream } from "node:http2";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { WebSocket, WebSocketServer } from "ws";
import { wsPackage } from "./ws-package.js";
import { Code } from "../protocol/code.js";
import { parseMediaType } from "../protocol/content-type.js";
import { serverShuttingDown, tooManyHeaders } from "../protocol/errors.js";
import { firstHeader, H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { quote } from "../protocol/wire-text.js";
import { messageCodec } from "../message/message-codec.js";
import { EnvelopedServerCall } from "../protocol-grpc/server-call.js";
import { parseGrpcTimeout } from "../protocol-grpc/wire.js";
import { parseTriTimeout } from "../protocol-triple/wire.js";
import { CallContext } from "../runtime/context.js";
import { sendHttpError } from "../runtime/http-error.js";
import { HEALTH_SERVICE_NAME } from "../runtime/health.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { ServerProtocol, ServerProtocolHandler, ServerProtocolSettings } from "../runtime/server-protocol.js";
import { requestStreams } from "../service/descriptors.js";
import type { Exchange, OutHeaders, Peer, Responder } from "../transport/server/exchange.js";
import { SocketResponder } from "../transport/server/socket-responder.js";
import { WebSocketExchange } from "./exchange.js";
import { streamSupportError, webSocketOnStream } from "./over-stream.js";
import { WebSocketResponder } from "./responder.js";
import {
  bearerOfProtocols,
  closeCodeOf,
  closeReasonOf,
  handshakeMetadata,
  WS_DEFAULT_CONTENT_TYPE,
  WS_MEDIA_TYPES,
  WS_SUBPROTOCOL,
  wsFormatOf,
} from "./wire.js";

/** The name WebSocket calls and refused handshakes carry (`CallContext.protocol`, access log, telemetry). */
const WEBSOCKET = "triple-websocket";

type Headers = Record<string, string | string[] | undefined>;

/** A refused handshake's socket, with what the access log and telemetry read of a request. */
class HandshakeResponder implements Responder {
  readonly headers: Headers;
  readonly method = "GET";
  readonly path: string;
  readonly peer: { address: string; port: number };
  private readonly socket: SocketResponder;

  constructor(socket: Socket, req: IncomingMessage) {
    this.socket = new SocketResponder(socket);
    this.headers = req.headers;
    this.path = splitUrl(req.url).path;
    this.peer = { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 };
  }

  get headersSent(): boolean {
    return this.socket.headersSent;
  }

  respond(status: number, headers: OutHeaders, body?: Uint8Array | string): void {
    this.socket.respond(status, headers, body);
  }

  end(): void {
    this.socket.end();
  }

  reset(): void {
    this.socket.reset();
  }
}

/** How the server wants its WebSocket calls checked. */
interface WebSocketSettings {
  /** True when a browser page of `origin` may open calls here (the server's CORS origins, or same origin). */
  originAllowed(origin: string, host: string | undefined): boolean;
  /** A request side silent this long closes the call (1008); 0: never. */
  readonly idleMs: number;
}

/** What the pre-upgrade checks read of a handshake, whichever HTTP version carried it. */
interface Handshake {
  /** The request's headers, no HTTP/2 pseudo-header among them. */
  readonly headers: Headers;
  readonly path: string;
  readonly query: string | undefined;
  /** `Host`, or HTTP/2's `:authority`. */
  readonly host: string | undefined;
  readonly peer: Peer;
  readonly httpVersion: "1.1" | "2";
}

/** The handshake of an HTTP/1.1 upgrade. */
function handshakeOfUpgrade(req: IncomingMessage): Handshake {
  const { path, query } = splitUrl(req.url);
  const peer = { address: req.socket.remoteAddress ?? "", port: req.socket.remotePort ?? 0 };
  return { headers: req.headers, path, query, host: req.headers.host, peer, httpVersion: "1.1" };
}

/** The handshake of an HTTP/2 extended CONNECT: `:path` and `:authority` stand for the request line and `Host`. */
function handshakeOfStream(ex: Exchange): Handshake {
  const headers: Headers = {};
  for (const k in ex.headers) if (k.charCodeAt(0) !== 58 /* ":" */) headers[k] = ex.headers[k];
  const authority = firstHeader(ex.headers, ":authority");
  return { headers, path: ex.path, query: ex.query, host: authority, peer: ex.peer, httpVersion: "2" };
}

/** The HTTP/2 stream of an exchange of our listener (its body is the stream); undefined for others (a mounted handler's). */
function streamOf(ex: Exchange): ServerHttp2Stream | undefined {
  const s = ex.body as Partial<ServerHttp2Stream> | undefined;
  return ex.httpVersion === "2" && typeof s?.respond === "function" && s.session !== undefined ? (s as ServerHttp2Stream) : undefined;
}

/** The subprotocol selected: `triple` when offered (browsers must be answered one), else none. */
function selectedProtocol(offered: string | undefined): string | undefined {
  if (offered === undefined) return undefined;
  return offered.split(",").some((p) => p.trim() === WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : undefined;
}

/** A handshake that passed every check: the call it starts. */
interface Accepted {
  readonly route: RegisteredMethod;
  readonly ctx: CallContext;
  readonly timeoutMs: number | undefined;
  readonly format: ReturnType<typeof wsFormatOf> & string;
  readonly path: string;
  readonly query: string | undefined;
  readonly metadata: Headers;
}

function splitUrl(url: string | undefined): { path: string; query: string | undefined } {
  const u = url ?? "/";
  const q = u.indexOf("?");
  return q < 0 ? { path: u, query: undefined } : { path: u.slice(0, q), query: u.slice(q + 1) };
}

/**
 * Triple over WebSocket on the server (Dubbo 3.3's mapping, docs/protocol.md): an HTTP/1.1
 * `Upgrade: websocket` GET, or an HTTP/2 extended CONNECT with `:protocol: websocket` (RFC 8441),
 * to a method's path is checked like any call — route, origin, header count, draining, content
 * type, timeout, bearer token and roles — and refused with an HTTP error before the upgrade when
 * it fails; an accepted one runs on the enveloped server call gRPC streams use, through a
 * {@link WebSocketExchange} on the socket or the stream.
 */
class WebSocketHandler implements ServerProtocolHandler {
  readonly name = WEBSOCKET;
  /** ws's server (no listener of its own), made on the first upgrade: `ws` loads only when used. */
  private wssMade: WebSocketServer | undefined;

  constructor(
    private readonly core: ServerCore,
    private readonly settings: WebSocketSettings,
  ) {}

  /** HTTP/1.1 calls come as upgrades ({@link upgrade}); every CONNECT (HTTP/2 extended CONNECT) is ours. */
  claims(ex: { readonly method: string }): boolean {
    return ex.method === "CONNECT";
  }

  /**
   * A CONNECT stream: with `:protocol: websocket` a WebSocket call (RFC 8441), or refused with an
   * HTTP error; without `:protocol` (a proxy's CONNECT) or with another one, 501. Never throws.
   */
  handle(ex: Exchange): void {
    const protocol = firstHeader(ex.headers, ":protocol");
    const stream = streamOf(ex);
    if (protocol === undefined || protocol.toLowerCase() !== "websocket" || stream === undefined) {
      const why =
        protocol === undefined
          ? "CONNECT without :protocol: this server is no proxy; a Triple over WebSocket call is a CONNECT with :protocol websocket (RFC 8441)"
          : stream === undefined
            ? "WebSocket over HTTP/2 is served on the server's own port only, not through a mounted handler"
            : `cannot open ${quote(protocol)} over CONNECT: only :protocol websocket (RFC 8441)`;
      this.refuseExchange(ex, new RpcError(Code.Unimplemented, why, { httpStatus: 501 }));
      return;
    }
    this.admit(
      () => handshakeOfStream(ex),
      (a) => this.acceptStream(ex, stream, a),
      (e) => this.refuseExchange(ex, e),
    );
  }

  /** Refused handshakes are answered as HTTP errors (the JSON error body). */
  writeError(r: Responder, err: RpcError): void {
    sendHttpError(r, err);
  }

  /** Closes the WebSocket with the code and reason of `err`. */
  cancel(_ctx: unknown, ex: Exchange, err: RpcError): void {
    (ex as WebSocketExchange).endWith(closeCodeOf(err), closeReasonOf(err));
  }

  private get maxPayload(): number {
    const max = this.core.limits.maxMessageBytes;
    // ws closes 1009 past it, before buffering the message.
    return Number.isFinite(max) ? Math.max(1, max) : 0;
  }

  private get wss(): WebSocketServer {
    if (this.wssMade !== undefined) return this.wssMade;
    this.wssMade = new (wsPackage().WebSocketServer)({
      noServer: true,
      maxPayload: this.maxPayload,
      perMessageDeflate: false,
      handleProtocols: (offered) => (offered.has(WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : false),
    });
    return this.wssMade;
  }

  /** A node:http `'upgrade'` event: a WebSocket call, or refused with an HTTP error. Never throws. */
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on("error", () => socket.destroy());
    if ((req.headers.upgrade ?? "").toLowerCase() !== "websocket") {
      this.refuse(
        req,
        socket,
        new RpcError(Code.InvalidArgument, `cannot upgrade to ${quote(String(req.headers.upgrade))}: only websocket`, { httpStatus: 400 }),
      );
      return;
    }
    this.admit(
      () => handshakeOfUpgrade(req),
      (a) => this.accept(req, socket, head, a),
      (e) => this.refuse(req, socket, e),
    );
  }

  /** The one pre-upgrade check of both HTTP versions: {@link check}, then the method's authorization. */
  private admit(handshake: () => Handshake, accept: (a: Accepted) => void, refuse: (e: unknown) => void): void {
    let accepted: Accepted;
    try {
      accepted = this.check(handshake());
    } catch (e) {
      refuse(e);
      return;
    }
    const authorize = accepted.route.authorize;
    if (authorize === undefined) accept(accepted);
    else
      authorize(accepted.ctx).then(
        () => accept(accepted),
        (e) => refuse(e),
      );
  }

  /** Everything that can be refused from the handshake alone. */
  private check(h: Handshake): Accepted {
    const version = firstHeader(h.headers, "sec-websocket-version");
    if (version !== "13") {
      throw new RpcError(Code.InvalidArgument, `sec-websocket-version ${quote(version ?? "")} is not supported: send 13 (RFC 6455)`, { httpStatus: 400 });
    }
    const origin = firstHeader(h.headers, "origin");
    if (origin !== undefined && !this.settings.originAllowed(origin, h.host)) {
      throw new RpcError(Code.PermissionDenied, `origin ${quote(origin)} may not open WebSocket calls here: add it to the server's cors.origins`, {
        httpStatus: 403,
      });
    }
    const { path, query } = h;
    const metadata = handshakeMetadata(h.headers, query);
    const bearer = bearerOfProtocols(firstHeader(h.headers, "sec-websocket-protocol"));
    if (bearer !== undefined && metadata.authorization === undefined) metadata.authorization = `Bearer ${bearer}`;
    const limits = this.core.limits;
    const count = Object.keys(metadata).length;
    if (count > limits.maxHeaderCount) throw tooManyHeaders(count, limits.maxHeaderCount);
    const route = this.core.router.resolve(path, metadata);
    if (this.core.draining && route.service.name !== HEALTH_SERVICE_NAME) throw serverShuttingDown();
    const format = this.formatOf(firstHeader(metadata, H.contentType));
    const tri = firstHeader(metadata, H.triServiceTimeout);
    const timeoutMs = tri !== undefined ? parseTriTimeout(H.triServiceTimeout, tri) : parseGrpcTimeout(firstHeader(metadata, H.grpcTimeout));
    const ctx = new CallContext(route.descriptor, metadata, WEBSOCKET, h.httpVersion, h.peer, timeoutMs);
    return { route, ctx, timeoutMs, format, path, query, metadata };
  }

  private formatOf(contentType: string | undefined): NonNullable<ReturnType<typeof wsFormatOf>> {
    const mt = parseMediaType(contentType ?? WS_DEFAULT_CONTENT_TYPE);
    const format = mt && wsFormatOf(mt.type);
    if (format) return format;
    throw new RpcError(Code.InvalidArgument, `unsupported WebSocket message type ${quote(contentType ?? "")}; supported: ${WS_MEDIA_TYPES.join(", ")}`, {
      httpStatus: 415,
    });
  }

  /** Completes the HTTP/1.1 handshake (101) and starts the call. */
  private accept(req: IncomingMessage, socket: Socket, head: Buffer, a: Accepted): void {
    if (socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.startCall(ws, socket, a, "1.1"));
  }

  /** Completes an extended CONNECT (200, no `Sec-WebSocket-Accept` in RFC 8441) and starts the call on its stream. */
  private acceptStream(ex: Exchange, stream: ServerHttp2Stream, a: Accepted): void {
    if (stream.destroyed || stream.closed) return;
    const pkg = wsPackage();
    const unsupported = streamSupportError(pkg);
    if (unsupported) {
      this.refuseExchange(ex, unsupported);
      return;
    }
    const protocol = selectedProtocol(firstHeader(a.metadata, "sec-websocket-protocol"));
    // Through the exchange: a CORS origin's headers join the 200.
    ex.start(200, protocol ? { "sec-websocket-protocol": protocol } : {}, false);
    const ws = webSocketOnStream(pkg, stream, { server: true, maxPayload: this.maxPayload, protocol });
    this.startCall(ws, stream, a, "2");
  }

  /** The call of an accepted handshake, on its WebSocket: the same exchange over either HTTP version. */
  private startCall(ws: WebSocket, transport: Duplex, a: Accepted, httpVersion: "1.1" | "2"): void {
    const md = a.route.descriptor;
    const single = !requestStreams(md.kind);
    const ex = new WebSocketExchange(ws, transport, a.path, a.query, a.metadata, a.ctx.peer, single, this.settings.idleMs, httpVersion);
    // Authorized at the handshake already: the call does not ask again.
    const route = a.route.authorize === undefined ? a.route : { ...a.route, authorize: undefined };
    new EnvelopedServerCall(this.core, ex, route, a.ctx, messageCodec(md, a.format), new WebSocketResponder(ex), undefined, a.timeoutMs);
    if (!route.seesContext) ex.releaseHeaders();
  }

  /**
   * A handshake refused: the HTTP status and JSON error body of the error, then the socket closes;
   * recorded as a refusal (telemetry, access log) with the handshake's method, path and peer.
   */
  private refuse(req: IncomingMessage, socket: Socket, reason: unknown): void {
    if (socket.destroyed) return;
    const err = RpcError.from(reason);
    const r = new HandshakeResponder(socket, req);
    this.core.refused(r as unknown as Exchange, WEBSOCKET, err);
    sendHttpError(r, err);
  }

  /** An extended CONNECT refused: the HTTP status and JSON error body on its stream (no WebSocket), recorded as a refusal. */
  private refuseExchange(ex: Exchange, reason: unknown): void {
    if (ex.headersSent) return;
    const err = RpcError.from(reason);
    this.core.refused(ex, WEBSOCKET, err);
    sendHttpError(ex, err);
  }
}

/** Triple over WebSocket's server half: it serves the server's HTTP/1.1 upgrades. */
export const websocketServer: ServerProtocol = {
  name: WEBSOCKET,
  open: (core: ServerCore, settings: ServerProtocolSettings) =>
    new WebSocketHandler(core, { idleMs: settings.webSocketIdleMs, originAllowed: settings.originAllowed }),
};
