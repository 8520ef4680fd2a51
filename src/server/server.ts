// The server: TripleCore (listener-free: registration, dispatch through protocols.ts, limits,
// telemetry, shutdown of calls) and TripleServer (the core + the one-port listener + registry).
// The core never names a protocol; the port's options are LISTENER_OPTIONS, one list.
import type { IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import { UploadStore } from "../codec/upload-store.js";
import { AccessLog } from "../observability/access-log.js";
import { ServerTelemetry } from "../observability/server-observer.js";
import { Code } from "../protocol/code.js";
import { headersTooLarge, serverShutDown } from "../protocol/errors.js";
import { RpcError } from "../protocol/rpc-error.js";
import { METADATA_V2_VERSION } from "../registry/instance.js";
import { METADATA_SERVICE_V2 } from "../registry/metadata-proto.js";
import type { Registry } from "../registry/registry.js";
import { authenticate } from "../runtime/auth.js";
import type { CallContext, WireProtocol } from "../runtime/context.js";
import { HandlerErrors } from "../runtime/handler-errors.js";
import { HEALTH_SERVICE_NAME, HealthService } from "../runtime/health.js";
import { InflightCalls } from "../runtime/inflight.js";
import { buildAuthorizer, buildInvoker, type Interceptor, invokerSeesContext } from "../runtime/interceptor.js";
import type { Limits } from "../runtime/limits.js";
import { checkedLogger, type Logger } from "../runtime/logger.js";
import { RestRouter } from "../runtime/rest-router.js";
import { Router } from "../runtime/router.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { ExchangeHead, ServerProtocolHandler } from "../runtime/server-protocol.js";
import { checkServiceJavaNames } from "../serialization/java-types.js";
import { describeService, pathsOf, type RegistrationOptions } from "../service/describe.js";
import type { ServiceDescriptor } from "../service/descriptors.js";
import type { Exchange, Responder } from "../transport/server/exchange.js";
import { OnePortListener, type Refusal, type TransportOptions } from "../transport/server/listener.js";
import { Cors } from "./cors.js";
import { OpenApiEndpoint } from "./openapi-endpoint.js";
import { REFLECTION_V1, REFLECTION_V1ALPHA, ServerReflectionV1, ServerReflectionV1Alpha } from "./reflection.js";
import { SERVER_PROTOCOLS } from "./protocols.js";
import { ProviderRegistration } from "./registration.js";
import { type ListenerConfig, resolveServerOptions, type ServerConfig, type ServerOptions, type ServiceRegistration } from "./server-options.js";
import { checkTlsPem } from "../transport/tls-pem.js";

/** Why a mounted handler refuses an option: the port's HTTP stack owns it, or it announces the port. */
type ListenerRole = "port" | "registry";

/**
 * The options that belong to the server owning the port, in one place: the port's HTTP stack
 * (TLS, header size, connection caps, timeouts) and the registry (announcing host:port). The
 * listener-free core ({@link TripleCore}) and every mounted handler take the others. A key
 * renamed in {@link ServerOptions} is a compile error here.
 */
const LISTENER_OPTIONS = {
  tls: "port",
  maxConcurrentStreams: "port",
  idleTimeoutMs: "port",
  headersTimeoutMs: "port",
  requestTimeoutMs: "port",
  bodyIdleTimeoutMs: "port",
  minBodyBytesPerSecond: "port",
  bodyRateWindowMs: "port",
  maxConnections: "port",
  maxConnectionsPerPeer: "port",
  http2SessionMemoryMb: "port",
  registry: "registry",
} as const satisfies { readonly [K in keyof ServerOptions]?: ListenerRole };

/**
 * The port's settings that sit inside a group of the core's options (the header-size limit is
 * read by the port's HTTP parser, not by the core): refused on a mount by their dotted path.
 */
const NESTED_LISTENER_OPTIONS: Readonly<Record<"limits.maxHeaderBytes", ListenerRole>> = { "limits.maxHeaderBytes": "port" };

/** The options of the server owning the port (its HTTP stack, its registry announcements). */
export type ListenerOptionKey = keyof typeof LISTENER_OPTIONS;
/** The options that announce the server in a registry. */
export type RegistryOptionKey = { [K in ListenerOptionKey]: (typeof LISTENER_OPTIONS)[K] extends "registry" ? K : never }[ListenerOptionKey];
/** The options of the listener-free core: what a mounted handler takes ({@link ServerOptions} without the port's). */
export type CoreOptions = Omit<ServerOptions, ListenerOptionKey>;

// Every transport option is the port's: one missing from LISTENER_OPTIONS is a compile error here.
type UnlistedTransportOption = Exclude<keyof TransportOptions, ListenerOptionKey>;
const transportOptionsListed: [UnlistedTransportOption] extends [never] ? true : UnlistedTransportOption = true;
void transportOptionsListed;

/**
 * Refuses, in options given from JavaScript, those of the port's server a mount cannot take
 * (`roles`: all of them, or only the registry's), naming the option and where it belongs.
 */
export function refuseListenerOptions(options: object, who: string, roles: readonly ListenerRole[] = ["port", "registry"]): void {
  const entries: [string, ListenerRole][] = [...Object.entries(LISTENER_OPTIONS), ...Object.entries(NESTED_LISTENER_OPTIONS)];
  for (const [path, role] of entries) {
    if (!roles.includes(role) || valueAt(options, path) === undefined) continue;
    throw new TypeError(
      role === "port"
        ? `${who}: ${path} is a setting of the server that owns the port; set it there (or use createServer, which owns its port)`
        : `${who}: ${path} needs a server that owns its port (registration announces host:port); use createServer for registry announcements`,
    );
  }
}

/** The value at a dotted option path (`limits.maxHeaderBytes`), or undefined. */
function valueAt(options: object, path: string): unknown {
  let v: unknown = options;
  for (const key of path.split(".")) v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}

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
 * The listener-free core: registration, routing, the protocols of `protocols.ts`, limits, CORS,
 * telemetry and the access log, shutdown of the calls. It owns no port: {@link TripleServer}
 * wraps it with the one-port listener, and every adapter (`createHandler`, Express, Fastify,
 * `createFetchHandler`) feeds it the exchanges of a server it does not own.
 */
export class TripleCore implements ServerCore {
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
  /** Mounted: the local address of the first request, for telemetry's `server.address`. */
  mountedAddress: AddressInfo | undefined = undefined;
  /** The protocols of `protocols.ts` this server speaks, in their order; the last claims every exchange. */
  private readonly protocols: readonly ServerProtocolHandler[];
  /** All but the last of {@link protocols}: those asked whether they claim an exchange. */
  private readonly claimants: readonly ServerProtocolHandler[];
  /** The last protocol: it serves what no other claimed, and answers what the server cannot serve. */
  private readonly fallback: ServerProtocolHandler;
  private readonly interceptors: readonly Interceptor[];
  private readonly cors: Cors | undefined;
  private readonly openapi: OpenApiEndpoint | undefined;
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
  protected closing: Promise<void> | undefined;
  draining = false;
  /** True once `close()` began: health reports NOT_SERVING (calls are refused once `draining`). */
  shuttingDown = false;
  /** The built-in health service, unless disabled or the application registered its own. */
  readonly health: HealthService | undefined;

  /** @param webSocketIdleMs the owning server's `bodyIdleTimeoutMs`, for WebSocket calls. */
  constructor(
    readonly options: CoreOptions = {},
    webSocketIdleMs = 60_000,
  ) {
    const config = (this.config = resolveServerOptions(options));
    this.limits = config.limits;
    this.uploads = new UploadStore(config.uploadDir, this.limits.maxUploadDiskBytes, this.limits.maxUploadDiskBytesPerPeer);
    this.requireProtocolVersion = config.requireProtocolVersion;
    this.dubboJsErrors = config.dubboJsErrors;
    this.interceptors = options.interceptors ?? [];
    this.cors = options.cors ? new Cors(options.cors) : undefined;
    const oa = options.openapi;
    this.openapi = oa ? new OpenApiEndpoint(oa === true ? {} : oa, () => this.services.filter((s) => !BUILT_IN_SERVICES.has(s.name))) : undefined;
    this.logger = checkedLogger(options.logger, "createServer", config.clock);
    this.errors = new HandlerErrors(this.logger, config.maskUnexpectedErrors);
    this.telemetry = new ServerTelemetry(options.telemetry, () => this.boundAddress());
    const access = options.accessLog;
    this.accessLog = access ? new AccessLog(access === true ? true : checkedLogger(access, "createServer accessLog")) : undefined;
    this.protocols = this.openProtocols(options, webSocketIdleMs);
    this.claimants = this.protocols.slice(0, -1);
    this.fallback = this.protocols[this.protocols.length - 1];
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
  }

  /** Opens every protocol of the list for this server; those its options leave off are skipped. */
  private openProtocols(options: CoreOptions, webSocketIdleMs: number): ServerProtocolHandler[] {
    const settings = {
      options: options as Readonly<Record<string, unknown>>,
      corsOn: options.cors !== undefined,
      originAllowed: (origin: string, host: string | undefined) => this.originAllowed(origin, host),
      webSocketIdleMs,
      logger: this.logger,
      address: () => this.boundAddress(),
    };
    const open: ServerProtocolHandler[] = [];
    for (const p of SERVER_PROTOCOLS) {
      const h = p.open(this, settings);
      if (h !== undefined) open.push(h);
    }
    return open;
  }

  /** The address telemetry and MCP report as the server's: a mounted core's is its first request's local address. */
  protected boundAddress(): AddressInfo | undefined {
    return this.mountedAddress;
  }

  /** A service was registered (`added`) or withdrawn: the listening server announces it. */
  protected announce(_service: ServiceDescriptor, _added: boolean): void {}

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
        for (const p of this.protocols) p.add?.(entry);
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
    if (!BUILT_IN_SERVICES.has(service.name)) this.announce(service, true);
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
    if (!BUILT_IN_SERVICES.has(service.name)) this.announce(service, false);
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
    for (const p of this.protocols) p.remove?.(service);
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
    if (this.router.serves(path) || (this.rest?.serves(path) ?? false) || (this.openapi?.serves(path) ?? false)) return true;
    for (const p of this.protocols) if (p.serves?.(path)) return true;
    return false;
  }

  /**
   * Serves an HTTP/1.1 upgrade request (node:http's `'upgrade'` event): a WebSocket call to a
   * method's path (Triple over WebSocket), or an HTTP error. A mounted handler's host server
   * passes its own `'upgrade'` events here. Never throws.
   */
  handleUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const p = this.protocols.find((x) => x.upgrade !== undefined);
    if (p?.upgrade) p.upgrade(req, socket, head);
    else socket.destroy();
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
      this.claimantOf(ex).handle(ex);
    } catch (e) {
      // A bug in a handler path must not take the process down: log it, answer 500 and carry on.
      this.logger.error({ err: e, path: ex.path, peer: `${ex.peer.address}:${ex.peer.port}` }, `internal error serving ${ex.path}: ${(e as Error).message}`);
      this.fallback.writeError(ex, new RpcError(Code.Internal, `internal error: ${(e as Error).message}`, { cause: e }));
    }
  }

  /** The first protocol of the list that claims `ex`, else the last one. */
  private claimantOf(ex: ExchangeHead): ServerProtocolHandler {
    const list = this.claimants;
    for (let i = 0; i < list.length; i++) if (list[i].claims(ex)) return list[i];
    return this.fallback;
  }

  /**
   * Answers a request the server will not serve (before any handler ran) with `err`, in the
   * terms of the protocol that claims it (gRPC / gRPC-Web status, Connect error JSON, the Triple
   * HTTP error body …).
   */
  answerError(ex: Exchange, err: RpcError): void {
    this.writeError(ex, err, true);
  }

  /** Writes `err` in the protocol that claims `ex`; recorded as a refusal (telemetry, access log) when `refused`. */
  writeError(ex: Exchange, err: RpcError, refused = false): void {
    const p = this.claimantOf(ex);
    if (refused) this.refused(ex, p.name, err);
    p.writeError(ex, err);
  }

  /**
   * Answers a request the listener refused (headers too large, request timeout, unparsable), in
   * the form of the protocol that claims what it carries (the last one when nothing could be
   * read), and logs it under that protocol's name.
   */
  protected answerRefusal(r: Responder, refusal: Refusal): void {
    const err = refusalError(refusal);
    const p = this.claimantOf(headOf(r));
    this.accessLog?.refused(r, p.name, err);
    p.writeError(r, err);
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

  /** Number of calls in progress. */
  get inflightCount(): number {
    return this.inflight.size;
  }

  /**
   * Creates the upload directory and deletes the temp files of crashed processes, before this
   * server spills anything; a directory that cannot be used is logged (spilled uploads then fail).
   */
  sweepUploads(): void {
    try {
      this.uploads.sweep();
    } catch (e) {
      // A directory others could tamper with is a configuration error: refuse to start.
      if (e instanceof TypeError) throw e;
      this.logger.warn({ dir: this.uploads.given, err: e }, `cannot prepare the upload directory: ${(e as Error).message}; large streamed uploads will fail`);
    }
  }

  /**
   * Graceful shutdown of the calls: health turns NOT_SERVING, new calls are refused with
   * `unavailable`, in-flight ones get `shutdownTimeoutMs` to finish, then are cancelled.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  /** What `close()` does once: drain the calls (the listening server first leaves its registry). */
  protected shutdown(): Promise<void> {
    return this.drain();
  }

  /** Stops taking connections (the listening server's); resolves once the port is closed. */
  protected stopAccepting(): Promise<void> | undefined {
    return undefined;
  }

  /** Closes every connection left (the listening server's). */
  protected destroyConnections(): void {}

  /** Ends a call the server gives up on, in its own protocol's terms (the context names it: a gRPC exchange may have released its request headers). */
  private cancelExchange(ctx: CallContext, ex: Exchange, err: RpcError): void {
    (this.protocols.find((p) => p.name === ctx.protocol) ?? this.fallback).cancel(ctx, ex, err);
  }

  protected drain(): Promise<void> {
    this.shuttingDown = true;
    this.health?.shutdown();
    return (async () => {
      // Readiness fails first, while new connections and calls are still served.
      const delay = this.config.drainDelayMs;
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      this.draining = true;
      const stopped = this.stopAccepting();
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
          this.cancelExchange(ctx, ex, err);
        }
      }
      // Let final responses flush before the sockets go.
      await new Promise((r) => setTimeout(r, 20));
      this.destroyConnections();
      await stopped;
      this.uploads.close();
    })();
  }
}

/**
 * One server, one port: the listener-free {@link TripleCore} behind the one-port listener
 * (HTTP/1.1 and HTTP/2: h2c prior knowledge, or h2 over TLS by ALPN; WebSocket upgrades), and
 * its registry announcements.
 */
export class TripleServer extends TripleCore {
  declare readonly options: ServerOptions;
  /** The server's own port. */
  private readonly listener: OnePortListener;
  /** The server's registry nodes, when `registry` is set. */
  private readonly registration: ProviderRegistration | undefined;

  constructor(options: ServerOptions = {}) {
    checkTlsPem(options.tls, "createServer");
    super(options, options.bodyIdleTimeoutMs ?? 60_000);
    this.listener = this.createListener(this.config.transport);
    if (this.config.registry !== undefined) {
      this.registration = new ProviderRegistration({ ...this.config.registry, logger: this.logger });
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
        onRefusal: (r, refusal) => this.answerRefusal(r, refusal),
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

  protected override boundAddress(): AddressInfo | undefined {
    // Read by telemetry while the core is built, before the listener exists.
    return this.listener?.address() ?? undefined;
  }

  protected override announce(service: ServiceDescriptor, added: boolean): void {
    const reg = this.registration;
    if (reg === undefined) return;
    void (added ? reg.add(service) : reg.remove(service.name, service.version, service.group)).catch(() => {});
  }

  protected override stopAccepting(): Promise<void> {
    return this.listener.stopAccepting();
  }

  protected override destroyConnections(): void {
    this.listener.destroyAll();
  }

  /**
   * Serves a connection that does not come from the server's port (an in-memory one of
   * `createTestClient`), as HTTP/1.1 or HTTP/2.
   */
  acceptConnection(connection: Duplex, httpVersion: "1.1" | "2"): void {
    this.listener.accept(connection, httpVersion);
  }

  /**
   * Open connections; connections refused at accept since the start (`maxConnections`,
   * `maxConnectionsPerPeer` reached with no idle connection to close); idle connections closed
   * to admit new ones since the start.
   */
  get connections(): { open: number; refused: number; evicted: number } {
    return this.listener.connections;
  }

  /**
   * Starts listening; resolves with the bound address. With a registry, resolves once the
   * services are registered (or the registry's first attempt failed; it keeps retrying).
   */
  async listen(opts: ListenOptions = {}): Promise<AddressInfo> {
    this.sweepUploads();
    await this.listener.listen(opts.port ?? 50051, opts.host ?? "127.0.0.1");
    if (this.registration) {
      await this.registration.register(
        this.registeredServices.filter((s) => !BUILT_IN_SERVICES.has(s.name)),
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
    const a = this.listener.address();
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
  protected override shutdown(): Promise<void> {
    const reg = this.registration;
    // Registry nodes go first, so consumers stop choosing this server before it refuses calls.
    return reg
      ? reg
          .unregister()
          .then(() => this.drain())
          .finally(() => reg.close())
      : this.drain();
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

/** What a protocol reads to claim a request the listener refused (an exchange, or a bare socket with no request line). */
function headOf(r: Responder): ExchangeHead {
  const ex = r as Partial<Exchange>;
  return { method: ex.method ?? "", path: ex.path ?? "", query: ex.query, headers: r.headers };
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
