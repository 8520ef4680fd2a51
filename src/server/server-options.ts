/**
 * createServer's public options (grouped: `limits`, `uploads`, `registry`) and their one check:
 * {@link resolveServerOptions} turns them into the {@link ServerConfig} the server reads. Old
 * names of 0.1 are refused naming the new ones; keep the rename table as long as 0.x lasts.
 */
import type { ConfigCenterSpec } from "../governance/config-center.js";
import type { AccessLogOption } from "../observability/access-log.js";
import type { ServerTelemetryOptions } from "../observability/server-observer.js";
import type { RegistrySpec } from "../registry/create.js";
import { checkLevel, type RegistryLevel, type RegistryOption, registryGroup } from "../registry/options.js";
import type { Registry } from "../registry/registry.js";
import { MAX_WEIGHT } from "../registry/service-url.js";
import type { AuthOptions } from "../runtime/auth.js";
import type { Interceptor } from "../runtime/interceptor.js";
import { checkedLimits, type LimitOptions, type Limits, type UploadOptions } from "../runtime/limits.js";
import type { Logger } from "../runtime/logger.js";
import type { Clock } from "../transport/clock.js";
import { amount, bool, check, checked, checkedClock, ms, oneOf, refuseUnknown, type Rule } from "../runtime/options-check.js";
import type { RegistrationOptions } from "../service/describe.js";
import type { TransportOptions } from "../transport/server/listener.js";
import type { CorsOptions } from "./cors.js";
import type { McpOptions } from "./mcp-endpoint.js";
import type { OpenApiServeOptions } from "./openapi-endpoint.js";

/** A service implementation with registration-time version and group. */
export interface ServiceRegistration extends RegistrationOptions {
  implementation: object;
}

/** createServer's `registry` group: where and how the server announces itself. */
export interface ServerRegistryOptions {
  /** `"zookeeper://host:2181"` (Dubbo's layout), or a {@link Registry} object (shared, not closed with the server). */
  address: RegistrySpec;
  /** `application=` in the provider URLs, and the application-level name. Default `triple-rpc`. */
  application?: string;
  /**
   * The host announced. Default: the bound host, or, when listening on 0.0.0.0 / ::, the first
   * non-internal IPv4 address of this machine.
   */
  host?: string;
  /** `weight=` in the provider URLs (consumers' balancers read it), 0 to 10000. Default 100. */
  weight?: number;
  /**
   * `warmup=` (ms) in the provider URLs and metadata: Dubbo's warm-up, during which consumers
   * (Dubbo's and triple-rpc's) ramp this server's weight up from 1, counted from its
   * registration `timestamp`. Default: none (Dubbo consumers then assume 10 minutes).
   */
  warmupMs?: number;
  /**
   * Where to register: `interface` (Dubbo's `/dubbo/<interface>/providers` nodes),
   * `application` (`/services/<application>/<host>:<port>`, the interface → application mapping,
   * and MetadataServiceV2 served on this port), or `both` (default, as Dubbo 3.3's `all`).
   */
  level?: RegistryLevel;
  /** With application-level registration: consumers read the metadata from MetadataServiceV2 (`local`, default) or the registry (`remote`). */
  metadataStorage?: "local" | "remote";
  /**
   * Dubbo's static tag (`dubbo.tag=`) in the provider URLs (interface level and the instance's
   * metadata): consumers' tag routing sends calls tagged so (`gray`) here. Default: none.
   */
  tag?: string;
  /**
   * Where configurators addressed to this provider are read (Dubbo Admin's weight, disable,
   * timeout: the server registers its URLs again as they say). Default: the registry itself
   * (ZooKeeper), as Dubbo Java; an address or a `ConfigCenter`; `false` none.
   */
  configCenter?: ConfigCenterSpec;
  /**
   * How long `close()` waits between removing the nodes and starting to drain, ms, so consumers
   * that batch registry notifications (Dubbo Java: up to 5 s) stop sending first. Default 0:
   * triple-rpc consumers follow within milliseconds, and calls that still arrive while draining
   * are refused with `unavailable`, which consumers retry elsewhere.
   */
  unregisterDelayMs?: number;
}

/** Options of {@link createServer}. */
export interface ServerOptions extends TransportOptions {
  /** Instances of `@Service` classes, or `{ implementation, version, group }`. */
  services?: ReadonlyArray<object | ServiceRegistration>;
  /** Server interceptors, outermost first. */
  interceptors?: readonly Interceptor[];
  /** Reject HTTP unary requests that lack `tri-protocol-version` (400). Default false. */
  requireProtocolVersion?: boolean;
  /**
   * Answer Triple HTTP unary errors to callers that look like dubbo-js on Node
   * (`tri-protocol-version: 1.0.0` and no `user-agent`) with the gRPC code in `status`, the only
   * error body dubbo-js 3.0 reads. Default false: every caller gets the protocol's body, whose
   * `status` is Dubbo's service status (25, 40, 60, 70, 80 …). Turn it on where dubbo-js clients
   * call; spec-following callers without a `user-agent` then get the gRPC code too.
   */
  dubboJsErrors?: boolean;
  /**
   * Size limits (request bodies, headers, messages, multipart, XML, numbers); unspecified ones
   * (left out or `undefined`) keep their defaults ({@link DEFAULT_LIMITS}). Each must be a whole
   * number >= 0 (`Infinity` lifts it); a bad value or an unknown name is a `TypeError` naming it.
   */
  limits?: LimitOptions;
  /**
   * Streamed uploads (`StreamedFile` parameters): the spill directory and their sizes in memory,
   * per file, per request and on disk. Each left out keeps its default.
   */
  uploads?: UploadOptions;
  /** How long `close()` lets in-flight calls finish before cancelling them, ms. Default 10 000. */
  shutdownTimeoutMs?: number;
  /**
   * How long `close()` keeps accepting connections and serving calls after health turned
   * `NOT_SERVING`, ms, before it stops accepting and drains: the time a readiness probe and the
   * load balancer behind it need to stop sending traffic (Kubernetes: a few probe periods).
   * Default 0: the listener closes at once.
   */
  drainDelayMs?: number;
  /** Bearer authentication: the token verifier (methods opt in with `auth` in their decorators). */
  auth?: AuthOptions;
  /** CORS for browser callers; off unless given. */
  cors?: CorsOptions;
  /**
   * Serve an OpenAPI 3.1 document of the registered services at `/openapi.json` and a Swagger UI
   * docs page at `/docs` (both GET, unauthenticated, ahead of the RPC protocols). `true` for the
   * defaults, or options for the paths and the document's `info`. Default off: the document
   * describes every method and parameter, so turn it on where the API is meant to be public, or
   * publish `toOpenApi()`'s output instead.
   */
  openapi?: boolean | OpenApiServeOptions;
  /**
   * Serve MCP (Model Context Protocol, streamable HTTP) at `/mcp`: the methods that opt in with
   * `@Method({ mcp })` or `@Service(…, { mcp: true })` become tools for AI agents, under the same
   * auth, validation, limits, interceptors and telemetry as every call (docs/mcp.md). `true` for
   * the defaults, or options. Default off; and on, no method is a tool unless it opted in.
   */
  mcp?: boolean | McpOptions;
  /** Serve the built-in `grpc.health.v1.Health` (Check, Watch). Default true. */
  health?: boolean;
  /**
   * Serve gRPC server reflection (`grpc.reflection.v1` and `v1alpha`), describing every
   * registered service: .proto-bound ones from their files, IDL-less ones by their derived
   * schema. Default true.
   */
  reflection?: boolean;
  /**
   * Where the server logs (pino's or console's shape). Default: the console, at most one line per
   * cause per minute. Handlers' unexpected errors (anything but an RpcError) are logged with their
   * stack, service, method and peer.
   */
  logger?: Logger;
  /**
   * What the server's log windows read as now (epoch ms): the default logger's repeat window (one
   * line per cause per minute) and the report of refused connections (one a minute). Default the
   * system clock. Timeouts and deadlines stay
   * on real timers (docs/operations.md, "The clock").
   */
  clock?: Clock;
  /**
   * Hide the text of unexpected handler errors (anything thrown that is not an RpcError) from
   * callers: they get `unknown` with `internal error (id <id>)`, and the log line carries the same
   * id. Default false: the handler's message reaches the caller as it is.
   */
  maskUnexpectedErrors?: boolean;
  /** OpenTelemetry: providers, propagator, trust in callers' trace context. Default: the global ones. */
  telemetry?: ServerTelemetryOptions;
  /**
   * An access log: one line per call when it ends, and one per request refused before a handler
   * (400, 404, 413, 415, 431, …), with method, path, protocol, status, code, duration, bytes and
   * peer. `true` writes pino-shaped JSON lines to stdout; a logger (pino's) gets `info(fields,
   * msg)`. Default off (and then free).
   */
  accessLog?: AccessLogOption;
  /**
   * Announce the services in a registry once the server listens: an address
   * (`"zookeeper://host:2181"`: Dubbo's layout), a {@link Registry} object (shared, not closed with
   * the server), or `{ address, …settings }` ({@link ServerRegistryOptions}). The built-in health
   * and reflection services are not announced. The nodes are removed first thing on `close()`.
   */
  registry?: RegistryOption<ServerRegistryOptions>;
}

/** Options of 0.1 that moved, with where they went (refused with that hint). */
const RENAMED: Readonly<Record<string, string>> = {
  maxHeaderBytes: "limits.maxHeaderBytes",
  uploadDir: "uploads.dir",
  application: "registry.application",
  registryHost: "registry.host",
  registryWeight: "registry.weight",
  registryWarmupMs: "registry.warmupMs",
  registerMode: "registry.level",
  metadataStorage: "registry.metadataStorage",
  registryTag: "registry.tag",
  configCenter: "registry.configCenter",
  unregisterDelayMs: "registry.unregisterDelayMs",
};

/** Every option of {@link ServerOptions} (a key missing or extra here is a compile error). */
const SERVER_OPTION_KEYS = Object.keys({
  services: 1,
  interceptors: 1,
  requireProtocolVersion: 1,
  dubboJsErrors: 1,
  limits: 1,
  uploads: 1,
  shutdownTimeoutMs: 1,
  drainDelayMs: 1,
  auth: 1,
  cors: 1,
  openapi: 1,
  mcp: 1,
  health: 1,
  reflection: 1,
  logger: 1,
  clock: 1,
  maskUnexpectedErrors: 1,
  telemetry: 1,
  accessLog: 1,
  registry: 1,
  tls: 1,
  maxConcurrentStreams: 1,
  idleTimeoutMs: 1,
  headersTimeoutMs: 1,
  requestTimeoutMs: 1,
  bodyIdleTimeoutMs: 1,
  minBodyBytesPerSecond: 1,
  bodyRateWindowMs: 1,
  maxConnections: 1,
  maxConnectionsPerPeer: 1,
  http2SessionMemoryMb: 1,
} satisfies Record<keyof ServerOptions, 1>);

/** The keys of {@link ServerRegistryOptions} besides `address`. */
const REGISTRY_KEYS = ["application", "host", "weight", "warmupMs", "level", "metadataStorage", "tag", "configCenter", "unregisterDelayMs"];

/** The listener's settings, as checked (the listener applies their defaults). */
export type ListenerConfig = TransportOptions & { readonly maxHeaderBytes: number; readonly clock?: Clock };

/** Everything the server reads of its options, checked and defaulted once. */
export interface ServerConfig {
  readonly limits: Limits;
  /** `uploads.dir`; undefined: a private temp directory. */
  readonly uploadDir: string | undefined;
  readonly transport: ListenerConfig;
  readonly shutdownTimeoutMs: number;
  readonly drainDelayMs: number;
  readonly requireProtocolVersion: boolean;
  readonly dubboJsErrors: boolean;
  readonly maskUnexpectedErrors: boolean;
  /** `clock`: the system clock when left out. */
  readonly clock: Clock;
  /** The `registry` group, checked, with its level and delay defaulted; undefined without a registry. */
  readonly registry: (ServerRegistryOptions & { readonly level: RegistryLevel; readonly unregisterDelayMs: number }) | undefined;
}

/** The transport's durations and what 0 means for each. */
const TRANSPORT_MS: ReadonlyArray<readonly [keyof TransportOptions, string]> = [
  ["idleTimeoutMs", "0 switches the timeout off"],
  ["headersTimeoutMs", "0 switches the timeout off"],
  ["requestTimeoutMs", "0 switches the timeout off"],
  ["bodyIdleTimeoutMs", "0 switches the timeout off"],
  ["bodyRateWindowMs", "0 switches the rate check off"],
];

/** The transport's counts and amounts. */
const TRANSPORT_RULES: ReadonlyArray<readonly [keyof TransportOptions, Rule]> = [
  ["maxConnections", { must: "a whole number >= 1 (or left out for the default)", ok: (v) => Number.isInteger(v) && (v as number) >= 1 }],
  ["maxConnectionsPerPeer", { must: "a whole number >= 1 (or left out for the default)", ok: (v) => Number.isInteger(v) && (v as number) >= 1 }],
  [
    "maxConcurrentStreams",
    { must: "a whole number from 0 to 4294967295", ok: (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff },
  ],
  ["minBodyBytesPerSecond", amount("bytes per second", 0, Number.MAX_VALUE, " (0 switches the check off)")],
  ["http2SessionMemoryMb", amount("MiB", 1)],
];

/** The listener's settings: each checked by its rule, the headers timeout within the request's. */
function checkedTransport(o: ServerOptions, limits: Limits, who: string): ListenerConfig {
  for (const [name, zero] of TRANSPORT_MS) check(who, name, o[name], ms(zero));
  for (const [name, rule] of TRANSPORT_RULES) check(who, name, o[name], rule);
  // node:http refuses a headers timeout longer than the whole request's (both on).
  const headers = o.headersTimeoutMs ?? 10_000;
  const request = o.requestTimeoutMs ?? 300_000;
  if (headers > 0 && request > 0 && headers > request) {
    throw new TypeError(
      `${who}: headersTimeoutMs (${headers}) must not exceed requestTimeoutMs (${request}${o.requestTimeoutMs === undefined ? ", the default" : ""}): raise requestTimeoutMs too, or set it to 0`,
    );
  }
  return { ...o, maxHeaderBytes: limits.maxHeaderBytes };
}

/** A registry tag: one word, no separators of Dubbo's URLs. */
const TAG: Rule = {
  must: 'a non-empty word (Dubbo\'s dubbo.tag, e.g. "gray")',
  ok: (v) => typeof v === "string" && v.trim() !== "" && !/[\s&=]/.test(v.trim()),
};

/** Dubbo's weight: consumers count a higher one as the maximum. */
const WEIGHT: Rule = {
  must: `a number from 0 to ${MAX_WEIGHT} (consumers count a higher weight as ${MAX_WEIGHT})`,
  ok: (v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_WEIGHT,
};

/** The `registry` group, checked (its address is resolved when the registration starts). */
function checkedRegistry(v: ServerOptions["registry"], who: string): ServerConfig["registry"] {
  if (v === undefined) return undefined;
  const g = registryGroup<ServerRegistryOptions>(who, v, REGISTRY_KEYS);
  check(who, "registry.application", g.application, { must: "a non-empty string", ok: (x) => typeof x === "string" && x !== "" });
  check(who, "registry.host", g.host, { must: "a non-empty string", ok: (x) => typeof x === "string" && x !== "" });
  check(who, "registry.weight", g.weight, WEIGHT);
  check(who, "registry.warmupMs", g.warmupMs, { must: "a whole number of milliseconds > 0", ok: (x) => Number.isInteger(x) && (x as number) > 0 });
  check(who, "registry.metadataStorage", g.metadataStorage, oneOf(["local", "remote"]));
  check(who, "registry.tag", g.tag, TAG);
  const level = checkLevel(who, g.level) ?? "both";
  const unregisterDelayMs = checked(who, "registry.unregisterDelayMs", g.unregisterDelayMs, ms("0 drains at once"), 0);
  return { ...g, level, unregisterDelayMs };
}

/**
 * createServer's options, checked once: a renamed option of 0.1, an unknown key of a group, or
 * a value outside its rule is a TypeError naming its full path (`limits.maxBodyBytes`).
 */
export function resolveServerOptions(o: ServerOptions, who = "createServer"): ServerConfig {
  if (typeof o !== "object" || o === null) throw new TypeError(`${who}: options must be an object, got ${String(o)}`);
  refuseUnknown(who, o, SERVER_OPTION_KEYS, RENAMED);
  const limits = checkedLimits(o.limits, o.uploads, who);
  const uploadDir = check(who, "uploads.dir", o.uploads?.dir, { must: "a directory path", ok: (x) => typeof x === "string" && x !== "" });
  const clock = checkedClock(who, o.clock);
  return {
    limits,
    uploadDir,
    transport: { ...checkedTransport(o, limits, who), clock },
    shutdownTimeoutMs: checked(who, "shutdownTimeoutMs", o.shutdownTimeoutMs, ms("0 cancels in-flight calls at once"), 10_000),
    drainDelayMs: checked(who, "drainDelayMs", o.drainDelayMs, ms("0 closes the listener at once"), 0),
    requireProtocolVersion: checked(who, "requireProtocolVersion", o.requireProtocolVersion, bool, false),
    dubboJsErrors: checked(who, "dubboJsErrors", o.dubboJsErrors, bool, false),
    maskUnexpectedErrors: checked(who, "maskUnexpectedErrors", o.maskUnexpectedErrors, bool, false),
    clock,
    registry: checkedRegistry(o.registry, who),
  };
}
