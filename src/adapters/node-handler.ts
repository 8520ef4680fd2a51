// Owns `bodyConsumedError`, `mountedServer`, `nodeHandlerOf`, `createHandler`. The error a request
// gets when its body was consumed by middleware mounted before the handler. Must not change: the
// host framework's contract: a request that is not ours goes on untouched.
import type * as http from "node:http";
import type * as http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { type CoreOptions, refuseListenerOptions, TripleCore } from "../server/server.js";
import { type Exchange, Http1Exchange, Http2Exchange } from "../transport/server/exchange.js";
import { installStreamTable } from "../transport/stream-table.js";

/**
 * Options of {@link createHandler}: those of `createServer`, minus what belongs to the server
 * that owns the port (TLS, connection caps, header size and timeouts are that server's settings)
 * and minus the registry (announcing needs the port, which the handler does not know): the
 * core's options, one list in server.ts deciding which are the port's.
 */
export type HandlerOptions = CoreOptions;

/** A request of node:http, or of node:http2's compatibility API (what `http2.createServer(handler)` passes). */
export type NodeRequest = http.IncomingMessage | http2.Http2ServerRequest;
/** The response that goes with a {@link NodeRequest}. */
export type NodeResponse = http.ServerResponse | http2.Http2ServerResponse;
/** Connect/Express style `next`: called for requests the handler does not serve. */
export type NextFunction = (err?: unknown) => void;

/**
 * A node request handler serving triple-rpc services, for a server you own:
 * `http.createServer(handler)`, `http2.createServer(handler)`, `http2.createSecureServer({ allowHTTP1: true, … }, handler)`,
 * or as a middleware `(req, res, next)`.
 */
export interface TripleHandler {
  /**
   * Serves `req` when its path is a registered method's (`/<service>/<method>`, health and
   * reflection included); any other path goes to `next`, or without `next` gets the protocol's
   * 404.
   */
  (req: NodeRequest, res: NodeResponse, next?: NextFunction): void;
  /**
   * The fast path for node:http2 without the compatibility API: a `'stream'` listener,
   * `http2.createServer().on("stream", handler.onStream)`, serving the streams whose path is a
   * method's (true) and leaving the others to the caller's own listeners (false). It skips the
   * request/response objects node builds per stream for `(req, res)` handlers, the difference
   * that remains between a mounted handler and `createServer` on small gRPC calls.
   */
  onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags?: number, rawHeaders?: string[]): boolean;
  /**
   * Triple over WebSocket on a server you own: an `'upgrade'` listener,
   * `server.on("upgrade", (req, socket, head) => handler.onUpgrade(req, socket, head) || socket.destroy())`,
   * serving upgrades whose path is a method's (true: a WebSocket call, or an HTTP error such as
   * 401 or 403 before the upgrade) and leaving the others to the caller (false). node:http
   * servers (Express's `app.listen()`, Fastify's `fastify.server`) emit `'upgrade'`; node:http2
   * has no upgrade, so an HTTP/2-only server cannot take WebSocket calls.
   */
  onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** True when requests for `path` (without query) are served here. */
  serves(path: string): boolean;
  /** Every path served here (each method under its declared and its upper/lower-case names). */
  paths(): string[];
  /**
   * Graceful shutdown of the calls: health turns NOT_SERVING, new calls are refused with
   * `unavailable`, in-flight ones get `shutdownTimeoutMs` to finish. The server that owns the
   * port closes its connections itself.
   */
  close(): Promise<void>;
}

const kWarned = Symbol("triple.bodyReadWarned");

/** Something upstream (a body parser) read the request body before the handler saw it. */
function bodyAlreadyRead(req: NodeRequest): boolean {
  const r = req as NodeRequest & { _body?: unknown; readableDidRead?: boolean };
  return r._body === true || r.readableDidRead === true || r.readableEnded;
}

/** The error a request gets when its body was consumed by middleware mounted before the handler. */
function bodyConsumedError(): RpcError {
  return new RpcError(
    Code.Internal,
    "the request body was already read by middleware that runs before triple-rpc (a body parser such as express.json(), " +
      "express.urlencoded(), express.text() or body-parser): mount triple-rpc's middleware before the body parsers, " +
      "or limit the parsers to your own routes",
    { httpStatus: 500 },
  );
}

/** HTTP/2 sessions already given the stream table. */
const tuned = new WeakSet<object>();

/**
 * Gives the HTTP/2 session a request came on the stream table `createServer`'s own listener
 * installs (far less GC under load; see `transport/stream-table.ts`), once per session: its
 * streams so far move over.
 */
function tuneSession(stream: http2.ServerHttp2Stream): void {
  const session = stream.session;
  if (session === undefined || tuned.has(session)) return;
  tuned.add(session);
  installStreamTable(session, true);
}

/** The exchange of a node:http request, or of a node:http2 compatibility request (its stream). */
function exchangeOf(req: NodeRequest, res: NodeResponse): Exchange {
  const stream = (req as http2.Http2ServerRequest).stream as http2.ServerHttp2Stream | undefined;
  if (stream === undefined) return new Http1Exchange(req as http.IncomingMessage, res as http.ServerResponse);
  tuneSession(stream);
  // node's compatibility response answers 'wantTrailers' with its own (empty) trailers; the
  // exchange sends the call's (gRPC status), so it must be the only one to answer.
  stream.removeAllListeners("wantTrailers");
  const raw = (req as http2.Http2ServerRequest).rawHeaders;
  return new Http2Exchange(stream, (req as http2.Http2ServerRequest).headers, raw.length >> 1);
}

/** The listener-free core of a mounted handler; an option of the port's server is a TypeError naming it. */
export function mountedServer(options: HandlerOptions, who: string): TripleCore {
  refuseListenerOptions(options, who);
  const core = new TripleCore(options);
  // A mounted handler never listens: its upload directory is prepared now.
  core.sweepUploads();
  return core;
}

/**
 * Wraps a listener-less server as a node handler. `stripPrefix` removes a mount prefix (a
 * Fastify plugin's) from the request path first.
 */
export function nodeHandlerOf(core: TripleCore, stripPrefix = ""): TripleHandler {
  const serves = (path: string) => core.serves(path);
  const handler = (req: NodeRequest, res: NodeResponse, next?: NextFunction): void => {
    if (stripPrefix) stripPath(req, stripPrefix);
    const url = (req as http2.Http2ServerRequest).stream ? (req.headers[":path"] as string | undefined) : req.url;
    const q = url ? url.indexOf("?") : -1;
    const path = url === undefined ? "/" : q < 0 ? url : url.slice(0, q);
    if (next && !core.serves(path)) {
      next();
      return;
    }
    if (core.mountedAddress === undefined) {
      const s = req.socket;
      if (s?.localAddress) core.mountedAddress = { address: s.localAddress, port: s.localPort ?? 0, family: s.localFamily ?? "IPv4" } as AddressInfo;
    }
    const ex = exchangeOf(req, res);
    if (bodyAlreadyRead(req)) {
      refuseConsumedBody(core, ex);
      return;
    }
    core.dispatch(ex);
  };
  const onStream = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, _flags?: number, rawHeaders?: string[]): boolean => {
    if (stripPrefix) stripH2Path(headers, stripPrefix);
    const p = headers[":path"] ?? "/";
    const q = p.indexOf("?");
    if (!core.serves(q < 0 ? p : p.slice(0, q))) return false;
    tuneSession(stream);
    core.dispatch(new Http2Exchange(stream, headers, rawHeaders ? rawHeaders.length >> 1 : Object.keys(headers).length));
    return true;
  };
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): boolean => {
    if (stripPrefix) stripPath(req as NodeRequest, stripPrefix);
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    if (!core.serves(q < 0 ? url : url.slice(0, q))) return false;
    core.handleUpgrade(req, socket as Socket, head);
    return true;
  };
  return Object.assign(handler, {
    onStream,
    onUpgrade,
    serves,
    paths: () => [...core.router.paths()],
    close: () => core.close(),
  });
}

function refuseConsumedBody(core: TripleCore, ex: Exchange): void {
  const err = bodyConsumedError();
  const holder = core as unknown as Record<symbol, boolean>;
  if (!holder[kWarned]) {
    holder[kWarned] = true;
    core.logger.warn({ path: ex.path }, err.message);
  }
  core.answerError(ex, err);
}

/** Removes a mount prefix from an HTTP/2 request's `:path`. */
function stripH2Path(headers: http2.IncomingHttpHeaders, prefix: string): void {
  const url = headers[":path"];
  if (url === undefined || !url.startsWith(prefix)) return;
  const rest = url.slice(prefix.length);
  headers[":path"] = rest.startsWith("/") ? rest : `/${rest}`;
}

/** Removes a mount prefix from a request's path (`/rpc/svc/m` → `/svc/m`). */
function stripPath(req: NodeRequest, prefix: string): void {
  const h2 = (req as http2.Http2ServerRequest).stream !== undefined;
  const url = h2 ? (req.headers[":path"] as string | undefined) : req.url;
  if (url === undefined || !url.startsWith(prefix)) return;
  const rest = url.slice(prefix.length);
  const next = rest.startsWith("/") ? rest : `/${rest}`;
  if (h2) (req.headers as Record<string, string>)[":path"] = next;
  else req.url = next;
}

/**
 * A node request handler serving `services` with everything `createServer` applies (limits,
 * auth, CORS, interceptors, telemetry, access log, health, reflection, errors), for a server you
 * own. Over node:http it serves Triple HTTP, Connect (unary and server streams), gRPC-Web, GET
 * and SSE; over node:http2 everything, gRPC streams included. Paths that are not a registered
 * method's go to `next` (as middleware) or get a 404.
 *
 * ```ts
 * const handler = createHandler({ services: [new GreeterImpl()] });
 * http2.createServer(handler).listen(8080);
 * ```
 */
export function createHandler(options: HandlerOptions = {}): TripleHandler {
  return nodeHandlerOf(mountedServer(options, "createHandler"));
}
