import type { IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { UploadStore } from "../codec/upload-store.js";
import { AccessLog } from "../observability/access-log.js";
import { ServerTelemetry } from "../observability/server-observer.js";
import { Code } from "../protocol/code.js";
import { headersTooLarge, serverShutDown } from "../protocol/errors.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { sendConnectError } from "../protocol-connect/error-writer.js";
import { ConnectHandler } from "../protocol-connect/server-handler.js";
import { CH, isConnectStreamType } from "../protocol-connect/wire.js";
import { isGrpcContentType } from "../protocol-grpc/content-type.js";
import { GrpcHandler } from "../protocol-grpc/server-handler.js";
import { sendGrpcStatus } from "../protocol-grpc/status.js";
import { GrpcWebHandler } from "../protocol-grpc-web/server-handler.js";
import { isGrpcWebContentType } from "../protocol-grpc-web/wire.js";
import { TripleHttpHandler } from "../protocol-triple/server-handler.js";
import type { WebSocketExchange } from "../protocol-websocket/exchange.js";
import { WebSocketHandler } from "../protocol-websocket/server-handler.js";
import { closeCodeOf, closeReasonOf } from "../protocol-websocket/wire.js";
import { METADATA_V2_VERSION } from "../registry/instance.js";
import { METADATA_SERVICE_V2 } from "../registry/metadata-proto.js";
import type { Registry } from "../registry/registry.js";
import { authenticate } from "../runtime/auth.js";
import type { CallContext, WireProtocol } from "../runtime/context.js";
import { sendHttpError } from "../runtime/error-body.js";
import { HandlerErrors } from "../runtime/handler-errors.js";
import { HEALTH_SERVICE_NAME, HealthService } from "../runtime/health.js";
import { InflightCalls } from "../runtime/inflight.js";
import { buildAuthorizer, buildInvoker, type Interceptor, invokerSeesContext } from "../runtime/interceptor.js";
import type { Limits } from "../runtime/limits.js";
import { checkedLogger, type Logger } from "../runtime/logger.js";
import { RestRouter } from "../runtime/rest-router.js";
import { Router } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import { checkServiceJavaNames } from "../serialization/java-types.js";
import { describeService, pathsOf, type RegistrationOptions } from "../service/describe.js";
import type { ServiceDescriptor } from "../service/descriptors.js";
import type { Exchange, Responder } from "../transport/server/exchange.js";
import { OnePortListener, type Refusal } from "../transport/server/listener.js";
import { Cors } from "./cors.js";
import { McpEndpoint, sendMcpError } from "./mcp-endpoint.js";
import { McpTools } from "./mcp-tools.js";
import { OpenApiEndpoint } from "./openapi-endpoint.js";
import { REFLECTION_V1, REFLECTION_V1ALPHA, ServerReflectionV1, ServerReflectionV1Alpha } from "./reflection.js";
import { ProviderRegistration } from "./registration.js";
import { type ListenerConfig, resolveServerOptions, type ServerConfig, type ServerOptions, type ServiceRegistration } from "./server-options.js";
import { checkTlsPem } from "../transport/tls-pem.js";

/** Services the server runs for itself, never announced in a registry (Dubbo does not register its built-in services either). */
const BUILT_IN_SERVICES: ReadonlySet<string> = new Set([HEALTH_SERVICE_NAME, REFLECTION_V1, REFLECTION_V1ALPHA, METADATA_SERVICE_V2]);

/** Where to listen. */
export interface ListenOptions {
  /** Port; 0 picks a free one. Default 50051. */
  port?: number;
  /** Host. Default 127.0.0.1. */
  host?: string;
}

/** The class of an implementation, refusing what is not an instance of a class. */
function implementationClass(implementation: unknown): new () => unknown {
  if (typeof implementation === "function") {
    const name = implementation.name || "the class";
    throw new TypeError(`register() takes an instance, not a class: pass new ${name}() instead of ${name}`);
  }
  if (typeof implementation !== "object" || implementation === null) {
    throw new TypeError(`register() takes an instance of an @Service class, got ${implementation === null ? "null" : typeof implementation}`);
  }
  return implementation.constructor as new () => unknown;
}

function isRegistration(x: object): x is ServiceRegistration {
  if (typeof x !== "object" || x === null || !("implementation" in x)) return false;
  const impl = (x as ServiceRegistration).implementation;
  return typeof impl === "object" || typeof impl === "function";
}

/**
 * One server, one port: HTTP/1.1 and HTTP/2 (h2c prior knowledge, or h2 over TLS by ALPN),
 * Triple HTTP unary and gRPC, for every registered service.
 */
export class TripleServer implements ServerCore {
  readonly router = new Router();
  /** REST routes, created with the first method that has one. */
  rest: RestRouter | undefined = undefined;
  readonly limits: Limits;
  /** The options as checked and defaulted once ({@link resolveServerOptions}). */
  readonly config: ServerConfig;
  readonly requireProtocolVersion: boolean;
  readonly dubboJsErrors: boolean;
  /** Where streamed uploads are spilled (`uploads.dir`). */
  readonly uploads: UploadStore;
  /** The server's own port; undefined for a handler mounted in someone else's server ({@link createHandler}). */
  private readonly listener: OnePortListener | undefined;
  /** Mounted: the local address of the first request, for telemetry's `server.address`. */
  mountedAddress: AddressInfo | undefined = undefined;
  private readonly http: TripleHttpHandler;
  private readonly grpc: GrpcHandler;
  private readonly grpcWeb: GrpcWebHandler;
  private readonly connect: ConnectHandler;
  private readonly websocket: WebSocketHandler;
  private readonly interceptors: readonly Interceptor[];
  private readonly cors: Cors | undefined;
  private readonly openapi: OpenApiEndpoint | undefined;
  private readonly mcp: McpEndpoint | undefined;
  private readonly inflight = new InflightCalls();
  private readonly telemetry: ServerTelemetry;
  private readonly errors: HandlerErrors;
  private readonly accessLog: AccessLog | undefined;
  /** Where the server logs. */
  readonly logger: Logger;
  private readonly services: ServiceDescriptor[] = [];
  /** The implementation of each service name, version and group. */
  private readonly claimed = new Map<string, object>();
  /** True once a registered method requires a bearer token: reflection then does too. */
  private protectedMethods = false;
  private drainWaiters: (() => void)[] = [];
  private closing: Promise<void> | undefined;
  draining = false;
  /** True once `close()` began: health reports NOT_SERVING (calls are refused once `draining`). */
  shuttingDown = false;
  /** The built-in health service, unless disabled or the application registered its own. */
  readonly health: HealthService | undefined;
  /** The server's registry nodes, when `registry` is set. */
  private readonly registration: ProviderRegistration | undefined;

  /**
   * @param mounted internal: no listener of its own, requests come from {@link createHandler}.
   */
  constructor(
    readonly options: ServerOptions = {},
    mounted = false,
  ) {
    const config = (this.config = resolveServerOptions(options));
    this.limits = config.limits;
    checkTlsPem(options.tls, "createServer");
    this.uploads = new UploadStore(config.uploadDir, this.limits.maxUploadDiskBytes, this.limits.maxUploadDiskBytesPerPeer);
    this.requireProtocolVersion = config.requireProtocolVersion;
    this.dubboJsErrors = config.dubboJsErrors;
    this.interceptors = options.interceptors ?? [];
    this.cors = options.cors ? new Cors(options.cors) : undefined;
    const oa = options.openapi;
    this.openapi = oa ? new OpenApiEndpoint(oa === true ? {} : oa, () => this.services.filter((s) => !BUILT_IN_SERVICES.has(s.name))) : undefined;
    this.logger = checkedLogger(options.logger, "createServer");
    this.mcp = options.mcp ? new McpEndpoint(options.mcp, this, new McpTools(), options.cors !== undefined, () => this.listener?.address() ?? this.mountedAddress, this.logger) : undefined;
    this.errors = new HandlerErrors(this.logger, config.maskUnexpectedErrors);
    this.telemetry = new ServerTelemetry(options.telemetry, () => this.listener?.address() ?? this.mountedAddress);
    const access = options.accessLog;
    this.accessLog = access ? new AccessLog(access === true ? true : checkedLogger(access, "createServer accessLog")) : undefined;
    this.http = new TripleHttpHandler(this);
    this.grpc = new GrpcHandler(this);
    this.grpcWeb = new GrpcWebHandler(this);
    this.connect = new ConnectHandler(this);
    this.websocket = new WebSocketHandler(this, { idleMs: options.bodyIdleTimeoutMs ?? 60_000, originAllowed: (o, host) => this.originAllowed(o, host) });
    this.listener = mounted ? undefined : this.createListener(config.transport);
    // A mounted handler never listens: its upload directory is prepared now.
    if (mounted) this.sweepUploads();
    for (const s of options.services ?? []) {
      if (isRegistration(s)) this.register(s.implementation, s);
      else this.register(s);
    }
    if (options.health !== false && !this.router.hasService(HEALTH_SERVICE_NAME)) {
      this.health = new HealthService(this);
      this.register(this.health);
    }
    if (options.reflection !== false && !this.router.hasService(REFLECTION_V1)) {
      this.register(new ServerReflectionV1(this));
      this.register(new ServerReflectionV1Alpha(this));
    }
    if (config.registry !== undefined) {
      this.registration = new ProviderRegistration({ ...config.registry, logger: this.logger });
      // Dubbo's consumers call it with version 2.0.0 and the application as group; others with neither.
      const ms = this.registration.metadataService;
      if (ms) this.register(ms).register(ms, { version: METADATA_V2_VERSION, group: this.registration.application });
    }
  }

  /** The server's own port: its exchanges come here, its refusals are answered here. */
  private createListener(options: ListenerConfig): OnePortListener {
    const listener = new OnePortListener(
      {
        onExchange: (ex) => this.dispatch(ex),
        onRefusal: (r, refusal) => answerRefusal(r, refusal, this.accessLog),
        onConnectionsRefused: (r) =>
          this.logger.warn(
            { reason: r.reason, limit: r.limit, refused: r.refused, peer: r.peer },
            `refusing new connections: ${r.reason} (${r.limit}) reached; ${r.refused} refused since the last report`,
          ),
      },
      options,
    );
    // Triple over WebSocket: HTTP/1.1 upgrades on the same port.
    listener.http1.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => this.handleUpgrade(req, socket, head));
    return listener;
  }

  /** Registers a service implementation (an instance of an `@Service` class). */
  register(implementation: object, options: RegistrationOptions = {}): this {
    const base = describeService(implementationClass(implementation));
    const service: ServiceDescriptor =
      options.version !== undefined || options.group !== undefined
        ? { ...base, version: options.version ?? base.version, group: options.group ?? base.group }
        : base;
    checkServiceJavaNames(service);
    this.claim(service, implementation);
    try {
      for (const md of service.methods) {
        const invoke = buildInvoker(implementation, md, this.interceptors, this.options.auth);
        const seesContext = invokerSeesContext(md, this.interceptors, this.options.auth);
        const reflection = service.name === REFLECTION_V1 || service.name === REFLECTION_V1ALPHA;
        const authorize = reflection ? this.reflectionAuthorizer() : buildAuthorizer(md, this.options.auth);
        if (authorize && !reflection) this.protectedMethods = true;
        const entry = { descriptor: md, service, invoke, seesContext: seesContext || reflection, errors: this.errors, authorize };
        if (md.http) (this.rest ??= new RestRouter()).add(entry);
        for (const path of pathsOf(md)) this.router.add(path, entry);
        this.mcp?.tools.add(entry);
      }
    } catch (e) {
      // A registration that fails (a REST route conflict, a path taken) leaves nothing behind:
      // none of its methods served, and nothing claimed for unregister() to find.
      this.claimed.delete(claimKey(service.name, service.version, service.group));
      this.unroute(service);
      throw e;
    }
    this.services.push(service);
    this.openapi?.invalidate();
    // A service added once the server is announced changes what the registry says of it.
    if (!BUILT_IN_SERVICES.has(service.name)) void this.registration?.add(service).catch(() => {});
    return this;
  }

  /**
   * Withdraws a service registered before (the same implementation, version and group as given
   * to `register`): its methods answer `unimplemented` (HTTP 404) to new calls, calls already
   * running finish, and it may be registered again. With a registry, its interface-level node is
   * removed and a new metadata revision published (MetadataServiceV2, report, instance node).
   * Throws a TypeError when that implementation is not registered under that version and group.
   */
  unregister(implementation: object, options: RegistrationOptions = {}): this {
    const base = describeService(implementationClass(implementation));
    const version = options.version ?? base.version;
    const group = options.group ?? base.group;
    const key = claimKey(base.name, version, group);
    if (this.claimed.get(key) !== implementation) {
      const what = `service ${base.name}${version ? ` version "${version}"` : ""}${group ? ` group "${group}"` : ""}`;
      throw new TypeError(`unregister: ${what} is not registered with this implementation; pass the instance (and version/group) given to register()`);
    }
    this.claimed.delete(key);
    const service = this.services.find((s) => s.name === base.name && s.version === version && s.group === group) as ServiceDescriptor;
    this.services.splice(this.services.indexOf(service), 1);
    this.unroute(service);
    this.openapi?.invalidate();
    if (!BUILT_IN_SERVICES.has(service.name)) void this.registration?.remove(service.name, version, group).catch(() => {});
    return this;
  }

  /**
   * Reflection describes every registered service, so it is protected as soon as one method is:
   * a caller without a valid token learns nothing of a protected API. Decided per call, because
   * services may be registered after reflection is.
   */
  private reflectionAuthorizer(): ((ctx: CallContext) => Promise<void>) | undefined {
    const auth = this.options.auth;
    if (auth === undefined) return undefined;
    return (ctx) => (this.protectedMethods ? authenticate(ctx, true, auth) : Promise.resolve());
  }

  /** Takes a service's RPC paths and REST routes off the routers. */
  private unroute(service: ServiceDescriptor): void {
    this.router.removeService(service);
    this.rest?.removeService(service);
    this.mcp?.tools.removeService(service);
  }

  /** One implementation per service name, version and group: a second one is a mistake, not a merge. */
  private claim(service: ServiceDescriptor, implementation: object): void {
    const key = claimKey(service.name, service.version, service.group);
    const prev = this.claimed.get(key);
    const what = `service ${service.name}${service.version ? ` version "${service.version}"` : ""}${service.group ? ` group "${service.group}"` : ""}`;
    if (prev === implementation) throw new TypeError(`${what} is registered twice with the same instance`);
    if (prev) {
      const a = prev.constructor.name || "an anonymous class";
      const b = implementation.constructor.name || "an anonymous class";
      throw new TypeError(
        a === b
          ? `${what} is registered twice (two instances of ${a}); register one, or give them different versions or groups`
          : `classes ${a} and ${b} are both ${what}; give one of them another @Service name, version or group`,
      );
    }
    this.claimed.set(key, implementation);
  }

  /** Descriptors of the registered services. */
  get registeredServices(): readonly ServiceDescriptor[] {
    return this.services;
  }

  /**
   * True when requests for `path` are served here, whatever their HTTP method: a registered
   * method's RPC path, a REST route's, the OpenAPI document and docs page, or the MCP endpoint. What a mounted
   * handler takes; the rest is its app's.
   */
  serves(path: string): boolean {
    return this.router.serves(path) || (this.rest?.serves(path) ?? false) || (this.openapi?.serves(path) ?? false) || (this.mcp?.serves(path) ?? false);
  }

  /**
   * Serves an HTTP/1.1 upgrade request (node:http's `'upgrade'` event): a WebSocket call to a
   * method's path (Triple over WebSocket), or an HTTP error. A mounted handler's host server
   * passes its own `'upgrade'` events here. Never throws.
   */
  handleUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    this.websocket.upgrade(req, socket, head);
  }

  /**
   * May a page of `origin` open WebSocket calls? With `cors`, its origins decide; without, only
   * the server's own origin (the `Host` the browser connected to), so no other site's page can
   * call with the user's network position.
   */
  private originAllowed(origin: string, host: string | undefined): boolean {
    if (this.cors) return this.cors.allows(origin);
    if (host === undefined) return false;
    const m = /^[a-z][a-z0-9+.-]*:\/\/([^/]+)$/i.exec(origin);
    return m !== null && m[1].toLowerCase() === host.toLowerCase();
  }

  /** Serves one exchange: CORS, then the protocol its headers name. Never throws. */
  dispatch(ex: Exchange): void {
    try {
      if (this.cors) {
        const next = this.cors.apply(ex);
        if (!next) return;
        ex = next;
      }
      if (this.openapi?.handle(ex)) return;
      if (this.mcp?.handle(ex)) return;
      this.route(ex);
    } catch (e) {
      // A bug in a handler path must not take the process down: log it, answer 500 and carry on.
      this.logger.error({ err: e, path: ex.path, peer: `${ex.peer.address}:${ex.peer.port}` }, `internal error serving ${ex.path}: ${(e as Error).message}`);
      sendHttpError(ex, new RpcError(Code.Internal, `internal error: ${(e as Error).message}`, { cause: e }));
    }
  }

  /**
   * Picks the protocol: gRPC and gRPC-Web and Connect streams by Content-Type, Connect unary by
   * its `connect-protocol-version` header, a GET by its Connect query; the rest is Triple HTTP.
   */
  private route(ex: Exchange): void {
    const ct = ex.headers[H.contentType];
    if (isGrpcContentType(ct)) {
      if (isGrpcWebContentType(ct)) this.grpcWeb.handle(ex);
      else this.grpc.handle(ex);
    } else if (ex.method === "GET") {
      // A REST GET may carry `?message=…` too: Connect GETs only go to RPC paths.
      if (this.connect.isGet(ex) && (this.rest === undefined || this.router.serves(ex.path))) this.connect.handleGet(ex);
      else this.http.handle(ex);
    } else if (isConnectStreamType(ct)) {
      this.connect.handleStream(ex);
    } else if (ex.headers[CH.protocolVersion] !== undefined) {
      this.connect.handleUnary(ex);
    } else {
      this.http.handle(ex);
    }
  }

  /**
   * Answers a request the server will not serve (before any handler ran) with `err`, in the
   * terms of the protocol its headers name: gRPC / gRPC-Web status, Connect error JSON, or the
   * Triple HTTP error body.
   */
  answerError(ex: Exchange, err: RpcError): void {
    this.writeError(ex, err, true);
  }

  /** Writes `err` in the protocol of `ex`'s headers; recorded as a refusal (telemetry, access log) when `refused`. */
  writeError(ex: Exchange, err: RpcError, refused = false): void {
    const ct = ex.headers[H.contentType];
    const connect = isConnectStreamType(ct) || ex.headers[CH.protocolVersion] !== undefined;
    const protocol: WireProtocol = isGrpcWebContentType(ct) ? "grpc-web" : isGrpcContentType(ct) ? "grpc" : connect ? "connect" : "triple";
    if (refused) this.refused(ex, protocol, err);
    if (protocol === "grpc-web") sendGrpcStatus(ex, err, { [H.contentType]: "application/grpc-web+proto" });
    else if (protocol === "grpc") sendGrpcStatus(ex, err, { [H.contentType]: "application/grpc" });
    else if (protocol === "connect") sendConnectError(ex, err, "connect");
    else sendHttpError(ex, err, undefined, this.dubboJsErrors);
  }

  track(ctx: CallContext, ex: Exchange): void {
    this.inflight.add(ctx, ex);
    if (ctx.observer !== undefined) return;
    if (this.telemetry.on()) ctx.observer = this.telemetry.observe(ctx, ex);
    // The access log's observer wraps the telemetry's (if any); off, it costs this one check.
    if (this.accessLog !== undefined) ctx.observer = this.accessLog.observe(ex, ctx.protocol, ctx.observer);
  }

  refused(ex: Exchange, protocol: WireProtocol, err: unknown): void {
    if (this.telemetry.on()) this.telemetry.refused(ex, protocol, RpcError.from(err), this.router.serves(ex.path));
    if (this.accessLog !== undefined) this.accessLog.refused(ex, protocol, RpcError.from(err));
  }

  untrack(ctx: CallContext, error: RpcError | undefined): void {
    const obs = ctx.observer;
    if (obs !== undefined) {
      ctx.observer = undefined;
      obs.end(error);
    }
    if (this.inflight.remove(ctx) && this.draining && this.inflight.size === 0) {
      for (const w of this.drainWaiters.splice(0)) w();
    }
  }

  /**
   * Serves a connection that does not come from the server's port (an in-memory one of
   * `createTestClient`), as HTTP/1.1 or HTTP/2.
   */
  acceptConnection(connection: Duplex, httpVersion: "1.1" | "2"): void {
    if (!this.listener) throw new Error("a mounted handler takes its connections from the server it is mounted in");
    this.listener.accept(connection, httpVersion);
  }

  /**
   * Open connections; connections refused at accept since the start (`maxConnections`,
   * `maxConnectionsPerPeer` reached with no idle connection to close); idle connections closed
   * to admit new ones since the start.
   */
  get connections(): { open: number; refused: number; evicted: number } {
    return this.listener?.connections ?? { open: 0, refused: 0, evicted: 0 };
  }

  /** Number of calls in progress. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /**
   * Creates the upload directory and deletes the temp files of crashed processes, before this
   * server spills anything; a directory that cannot be used is logged (spilled uploads then fail).
   */
  private sweepUploads(): void {
    try {
      this.uploads.sweep();
    } catch (e) {
      // A directory others could tamper with is a configuration error: refuse to start.
      if (e instanceof TypeError) throw e;
      this.logger.warn({ dir: this.uploads.given, err: e }, `cannot prepare the upload directory: ${(e as Error).message}; large streamed uploads will fail`);
    }
  }

  /**
   * Starts listening; resolves with the bound address. With a registry, resolves once the
   * services are registered (or the registry's first attempt failed; it keeps retrying).
   */
  async listen(opts: ListenOptions = {}): Promise<AddressInfo> {
    if (!this.listener) throw new Error("a mounted handler does not listen: its server (node:http, node:http2, Express, Fastify) owns the port");
    this.sweepUploads();
    await this.listener.listen(opts.port ?? 50051, opts.host ?? "127.0.0.1");
    if (this.registration) {
      await this.registration.register(
        this.services.filter((s) => !BUILT_IN_SERVICES.has(s.name)),
        this.address,
      );
    }
    return this.address;
  }

  /** The registry the server announces itself in, if any. */
  get registry(): Registry | undefined {
    return this.registration?.registry;
  }

  /** The bound address; throws before `listen()` resolved. */
  get address(): AddressInfo {
    const a = this.listener?.address();
    if (!a) throw new Error("the server is not listening yet: await server.listen() before reading its address or url");
    return a;
  }

  /** `http://host:port` (or https) of the listening server. */
  get url(): string {
    const a = this.address;
    const host = a.family === "IPv6" ? `[${a.address}]` : a.address;
    return `${this.options.tls ? "https" : "http"}://${host}:${a.port}`;
  }

  /**
   * Graceful shutdown: with a registry, remove this server's provider nodes first (and wait
   * `unregisterDelayMs`), so consumers stop choosing it; then refuse new calls, stop accepting
   * connections (GOAWAY on HTTP/2), let in-flight calls finish within `shutdownTimeoutMs`, cancel
   * the rest with `unavailable` and close every connection.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    const reg = this.registration;
    // Registry nodes go first, so consumers stop choosing this server before it refuses calls.
    this.closing = reg ? reg.unregister().then(() => this.drain()).finally(() => reg.close()) : this.drain();
    return this.closing;
  }

  private drain(): Promise<void> {
    this.shuttingDown = true;
    this.health?.shutdown();
    return (async () => {
      // Readiness fails first, while new connections and calls are still served.
      const delay = this.config.drainDelayMs;
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      this.draining = true;
      const stopped = this.listener?.stopAccepting();
      if (this.inflight.size > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((r) => this.drainWaiters.push(r)),
          new Promise<void>((r) => {
            timer = setTimeout(r, this.config.shutdownTimeoutMs);
          }),
        ]);
        clearTimeout(timer);
        for (const [ctx, ex] of this.inflight.entries()) {
          const err = serverShutDown();
          ctx.abort(err);
          cancelExchange(ctx, ex, err);
        }
      }
      // Let final responses flush before the sockets go.
      await new Promise((r) => setTimeout(r, 20));
      this.listener?.destroyAll();
      await stopped;
      this.uploads.close();
    })();
  }
}

/** Ends a call the server gives up on, in its own protocol's terms. */
function cancelExchange(ctx: CallContext, ex: Exchange, err: RpcError): void {
  // The context says the protocol: a gRPC exchange may have released its request headers.
  switch (ctx.protocol) {
    case "grpc":
      sendGrpcStatus(ex, err, { [H.contentType]: "application/grpc" });
      break;
    case "triple-websocket":
      (ex as WebSocketExchange).endWith(closeCodeOf(err), closeReasonOf(err));
      break;
    case "grpc-web":
    case "connect":
      // A stream under way cannot take a second ending from here: reset it; else answer plainly.
      if (ex.headersSent) ex.reset();
      else if (ctx.protocol === "connect") sendConnectError(ex, err, "connect");
      else sendGrpcStatus(ex, err, { [H.contentType]: "application/grpc-web+proto" });
      break;
    case "mcp":
      sendMcpError(ex, err);
      break;
    default:
      sendHttpError(ex, err);
  }
}

/** The error a listener refusal stands for. */
function refusalError(refusal: Refusal): RpcError {
  switch (refusal.kind) {
    case "headers-too-large":
      return headersTooLarge(refusal.limit);
    case "request-timeout":
      return new RpcError(Code.DeadlineExceeded, `request timeout: ${refusal.detail ?? "the request did not arrive in time"}`, { httpStatus: 408 });
    case "bad-request":
      return new RpcError(Code.InvalidArgument, `bad request: ${refusal.detail}`, { httpStatus: 400 });
  }
}

/** Answers a request the listener refused, as gRPC or as Triple HTTP by its content type. */
function answerRefusal(r: Responder, refusal: Refusal, accessLog: AccessLog | undefined): void {
  const err = refusalError(refusal);
  const ct = r.headers[H.contentType];
  accessLog?.refused(r, isGrpcContentType(ct) ? "grpc" : "http", err);
  if (isGrpcContentType(ct)) sendGrpcStatus(r, err, { [H.contentType]: "application/grpc" });
  else sendHttpError(r, err);
}

export type { ServerOptions, ServiceRegistration } from "./server-options.js";

/** Creates a server for the given services. `await createServer({ services }).listen({ port })`. */
export function createServer(options: ServerOptions = {}): TripleServer {
  return new TripleServer(options);
}

/** The key of a service's one implementation: name, version and group. */
function claimKey(name: string, version: string, group: string): string {
  return `${name}\0${version}\0${group}`;
}
