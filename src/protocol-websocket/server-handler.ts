// Owns `WebSocketHandler`. Triple over WebSocket on the server (Dubbo 3.3's mapping,
// docs/protocol.md): an HTTP/1.1 `Upgrade: websocket` GET to a method's path is checked like any
// call — route, … Must not change: the framing the web client and the server agree on; bounds on
// every frame.
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { WebSocketServer } from "ws";
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
import type { Exchange, OutHeaders, Responder } from "../transport/server/exchange.js";
import { SocketResponder } from "../transport/server/socket-responder.js";
import { WebSocketExchange } from "./exchange.js";
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
 * `Upgrade: websocket` GET to a method's path is checked like any call — route, origin, header
 * count, draining, content type, timeout, bearer token and roles — and refused with an HTTP
 * error before the upgrade when it fails; an accepted one runs on the enveloped server call
 * gRPC streams use, through a {@link WebSocketExchange}.
 */
class WebSocketHandler implements ServerProtocolHandler {
  readonly name = WEBSOCKET;
  /** ws's server (no listener of its own), made on the first upgrade: `ws` loads only when used. */
  private wssMade: WebSocketServer | undefined;

  constructor(
    private readonly core: ServerCore,
    private readonly settings: WebSocketSettings,
  ) {}

  /** Its calls come as HTTP/1.1 upgrades ({@link upgrade}), never as exchanges. */
  claims(): boolean {
    return false;
  }

  /** Not reached (nothing is claimed): an exchange is answered 400, as a WebSocket call must be an upgrade. */
  handle(ex: Exchange): void {
    this.writeError(ex, new RpcError(Code.InvalidArgument, "a Triple over WebSocket call is an HTTP/1.1 Upgrade: websocket GET", { httpStatus: 400 }));
  }

  /** Refused handshakes are answered as HTTP errors (the JSON error body). */
  writeError(r: Responder, err: RpcError): void {
    sendHttpError(r, err);
  }

  /** Closes the WebSocket with the code and reason of `err`. */
  cancel(_ctx: unknown, ex: Exchange, err: RpcError): void {
    (ex as WebSocketExchange).endWith(closeCodeOf(err), closeReasonOf(err));
  }

  private get wss(): WebSocketServer {
    if (this.wssMade !== undefined) return this.wssMade;
    const max = this.core.limits.maxMessageBytes;
    this.wssMade = new (wsPackage().WebSocketServer)({
      noServer: true,
      // ws closes 1009 past it, before buffering the message.
      maxPayload: Number.isFinite(max) ? Math.max(1, max) : 0,
      perMessageDeflate: false,
      handleProtocols: (offered) => (offered.has(WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : false),
    });
    return this.wssMade;
  }

  /** A node:http `'upgrade'` event: a WebSocket call, or refused with an HTTP error. Never throws. */
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on("error", () => socket.destroy());
    let accepted: Accepted;
    try {
      accepted = this.check(req);
    } catch (e) {
      this.refuse(req, socket, e);
      return;
    }
    const authorize = accepted.route.authorize;
    if (authorize === undefined) this.accept(req, socket, head, accepted);
    else
      authorize(accepted.ctx).then(
        () => this.accept(req, socket, head, accepted),
        (e) => this.refuse(req, socket, e),
      );
  }

  /** Everything that can be refused from the handshake alone. */
  private check(req: IncomingMessage): Accepted {
    if ((req.headers.upgrade ?? "").toLowerCase() !== "websocket") {
      throw new RpcError(Code.InvalidArgument, `cannot upgrade to ${quote(String(req.headers.upgrade))}: only websocket`, { httpStatus: 400 });
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !this.settings.originAllowed(origin, req.headers.host)) {
      throw new RpcError(Code.PermissionDenied, `origin ${quote(origin)} may not open WebSocket calls here: add it to the server's cors.origins`, {
        httpStatus: 403,
      });
    }
    const { path, query } = splitUrl(req.url);
    const metadata = handshakeMetadata(req.headers, query);
    const bearer = bearerOfProtocols(firstHeader(req.headers, "sec-websocket-protocol"));
    if (bearer !== undefined && metadata.authorization === undefined) metadata.authorization = `Bearer ${bearer}`;
    const limits = this.core.limits;
    const count = Object.keys(metadata).length;
    if (count > limits.maxHeaderCount) throw tooManyHeaders(count, limits.maxHeaderCount);
    const route = this.core.router.resolve(path, metadata);
    if (this.core.draining && route.service.name !== HEALTH_SERVICE_NAME) throw serverShuttingDown();
    const format = this.formatOf(firstHeader(metadata, H.contentType));
    const tri = firstHeader(metadata, H.triServiceTimeout);
    const timeoutMs = tri !== undefined ? parseTriTimeout(H.triServiceTimeout, tri) : parseGrpcTimeout(firstHeader(metadata, H.grpcTimeout));
    const peer = { address: req.socket.remoteAddress ?? "", port: req.socket.remotePort ?? 0 };
    const ctx = new CallContext(route.descriptor, metadata, WEBSOCKET, "1.1", peer, timeoutMs);
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

  /** Completes the handshake and starts the call. */
  private accept(req: IncomingMessage, socket: Socket, head: Buffer, a: Accepted): void {
    if (socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const md = a.route.descriptor;
      const single = !requestStreams(md.kind);
      const ex = new WebSocketExchange(ws, socket, a.path, a.query, a.metadata, a.ctx.peer, single, this.settings.idleMs);
      // Authorized at the handshake already: the call does not ask again.
      const route = a.route.authorize === undefined ? a.route : { ...a.route, authorize: undefined };
      new EnvelopedServerCall(this.core, ex, route, a.ctx, messageCodec(md, a.format), new WebSocketResponder(ex), undefined, a.timeoutMs);
      if (!route.seesContext) ex.releaseHeaders();
    });
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
}

/** Triple over WebSocket's server half: it serves the server's HTTP/1.1 upgrades. */
export const websocketServer: ServerProtocol = {
  name: WEBSOCKET,
  open: (core: ServerCore, settings: ServerProtocolSettings) =>
    new WebSocketHandler(core, { idleMs: settings.webSocketIdleMs, originAllowed: settings.originAllowed }),
};
