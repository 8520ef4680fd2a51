// Owns `ClientContentType`, `ClientProtocol`, `TokenSource`, `ClientOptions`. Wire format of a
// client's calls. With `triple`: `json`/`proto` bodies (Triple HTTP unary); `grpc+*` select gRPC.
// With `connect` and `grpc-web`: `json` or `proto` messages. Must not change: the client loads no
// server code.
import type * as tls from "node:tls";
import type { Logger } from "../runtime/logger.js";
import type { Clock } from "../transport/clock.js";
import type { TelemetryOptions } from "../observability/telemetry.js";
import type { MetadataInit } from "../protocol/rpc-error.js";
import type { ClusterPolicy, ClusterPolicyName } from "./cluster/cluster.js";
import type { Directory } from "./cluster/directory.js";
import type { OutlierDetectionOptions } from "./cluster/outlier.js";
import type { ClientInterceptor } from "./interceptor.js";
import type { LoadBalancer, LoadBalancerName } from "./loadbalance/load-balancer.js";
import type { ProviderInit } from "../transport/client/provider.js";
import type { Registry } from "../registry/registry.js";
import type { ConfigCenter } from "../governance/config-center.js";
import type { RegistrySpec } from "../registry/create.js";
import { type RegistryLevel, type RegistryOption } from "../registry/options.js";
import { bool, check, refuseRenamed, refuseUnknown } from "../runtime/options-check.js";

/**
 * Wire format of a client's calls. With `triple`: `json`/`proto` bodies (Triple HTTP unary);
 * `grpc+*` select gRPC. With `connect` and `grpc-web`: `json` or `proto` messages.
 */
export type ClientContentType = "json" | "proto" | "grpc+proto" | "grpc+json";

/**
 * The protocol a client speaks: `triple` (Triple HTTP unary; streams as gRPC), `grpc`, `connect`
 * (Connect: unary POST over HTTP/1.1 or HTTP/2, streams enveloped over HTTP/2), `grpc-web`
 * (unary over HTTP/1.1 or HTTP/2, streams over HTTP/2), `websocket` (Triple over WebSocket:
 * every call, streams included, on a WebSocket of its own over HTTP/1.1; `json` or `proto`).
 */
type ClientProtocol = "triple" | "grpc" | "connect" | "grpc-web" | "websocket";

/** A bearer token, or a function that yields one per call (refreshing tokens). */
export type TokenSource = string | (() => string | Promise<string>);

/** createClient's `registry` group: where and how the client finds its providers. */
export interface ClientRegistryOptions {
  /** `"zookeeper://host:2181"` (Dubbo's layout), or a {@link Registry} object (shared, not closed with the client). */
  address: RegistrySpec;
  /** The application name in the consumer's registry node (`application=`); default `triple-rpc`. */
  application?: string;
  /**
   * Where providers are found: `interface` (`/dubbo/<interface>/providers`), `application`
   * (the interface → application mapping, `/services/<app>`, each revision's metadata), or
   * `both` (default: merged; one provider per address). A migration rule may switch it.
   */
  level?: RegistryLevel;
  /** The applications providing this service (Dubbo's `provided-by`), skipping the mapping lookup. */
  providedBy?: string | readonly string[];
  /**
   * Where Dubbo's governance rules are read (condition and tag routes, configurators, migration
   * rules under `/dubbo/config/…`). Default: the registry itself, as Dubbo Java does (ZooKeeper);
   * an address (`"zookeeper://host:2181"`) or a {@link ConfigCenter} for another one; `false`
   * reads none. docs/governance.md.
   */
  configCenter?: string | ConfigCenter | false;
  /** Keep the last known providers when the registry suddenly lists none (Dubbo's empty protection), logging it once. Default true. */
  emptyProtection?: boolean;
  /** Register the consumer under `/dubbo/<interface>/consumers`, as Dubbo does. Default true. */
  registerConsumer?: boolean;
}

/** The keys of {@link ClientRegistryOptions} besides `address`. */
export const CLIENT_REGISTRY_KEYS = ["application", "level", "providedBy", "configCenter", "emptyProtection", "registerConsumer"];

/** Options of 0.1 that moved, with where they went (refused with that hint). */
const RENAMED: Readonly<Record<string, string>> = {
  timeout: "timeoutMs",
  application: "registry.application",
  discovery: "registry.level",
  providedBy: "registry.providedBy",
  configCenter: "registry.configCenter",
  emptyProtection: "registry.emptyProtection",
  registerConsumer: "registry.registerConsumer",
};

/** Every option of {@link ClientOptions} (a key missing or extra here is a compile error). */
const CLIENT_OPTION_KEYS = Object.keys({
  providers: 1,
  registry: 1,
  tag: 1,
  forceTag: 1,
  protocol: 1,
  httpVersion: 1,
  contentType: 1,
  serialization: 1,
  timeoutMs: 1,
  version: 1,
  group: 1,
  token: 1,
  metadata: 1,
  retries: 1,
  methods: 1,
  cluster: 1,
  loadBalance: 1,
  outlierDetection: 1,
  forks: 1,
  compression: 1,
  serviceName: 1,
  maxResponseBytes: 1,
  keepaliveMs: 1,
  keepaliveTimeoutMs: 1,
  connectTimeoutMs: 1,
  downBackoffMs: 1,
  failbackIntervalMs: 1,
  tls: 1,
  interceptors: 1,
  logger: 1,
  telemetry: 1,
  clock: 1,
  websocket: 1,
} satisfies Record<keyof ClientOptions, 1>);

/** `options` with no unknown key and no option of 0.1 left (a TypeError naming the new one); `methods.*.timeout` too. */
export function checkedClientOptions(options: ClientOptions): ClientOptions {
  refuseUnknown("createClient", options, CLIENT_OPTION_KEYS, RENAMED);
  for (const [name, m] of Object.entries(options.methods ?? {})) {
    if (m !== null && typeof m === "object") refuseRenamed("createClient", m, { timeout: `methods.${name}.timeoutMs` });
  }
  return options;
}

/** The error of a call given `{ timeout }`, renamed `timeoutMs` in 0.x. */
export function renamedCallTimeout(): TypeError {
  return new TypeError("call options: `timeout` was renamed `timeoutMs` in 0.x; see CHANGELOG.md");
}

/** A registry group's booleans, checked. */
export function checkRegistryFlags(g: ClientRegistryOptions): void {
  check("createClient", "registry.emptyProtection", g.emptyProtection, bool);
  check("createClient", "registry.registerConsumer", g.registerConsumer, bool);
}

/** Options of `createClient`. */
export interface ClientOptions {
  /**
   * The providers: a list (or comma-separated string) of URLs / host:port, or a {@link Directory}.
   * Give this or `registry`, not both.
   */
  providers?: string | readonly ProviderInit[] | Directory;
  /**
   * Find the providers in a registry and follow them live: an address (`"zookeeper://host:2181"`:
   * Dubbo's layout), a {@link Registry} object (shared, not closed with the client), or
   * `{ address, …settings }` ({@link ClientRegistryOptions}). Only `tri://` providers of the
   * client's version and group are used.
   */
  registry?: RegistryOption<ClientRegistryOptions>;
  /**
   * Dubbo's routing tag of every call (`dubbo.tag`, e.g. `"gray"`): tag routing sends calls to the
   * providers of that tag (their `registry.tag`, or an operator's tag rule), else, unless
   * `forceTag`, to untagged providers. A call's `tag` option, or the tag of the incoming call a
   * handler is serving, wins over it. Sent as the `dubbo.tag` attachment. docs/governance.md.
   */
  tag?: string;
  /** Dubbo's `dubbo.force.tag`: a tag no provider has fails the call (`unavailable`) instead of falling back. Needs `tag`. */
  forceTag?: boolean;
  /**
   * `triple` (HTTP unary, default), `grpc`, `connect` or `grpc-web`. Streams use HTTP/2: gRPC for
   * `triple` and `grpc` clients, the client's own protocol for `connect` and `grpc-web`.
   */
  protocol?: ClientProtocol;
  /** HTTP version of unary calls (Triple, Connect, gRPC-Web): `"2"` (default) or `"1.1"`, as strings or numbers. gRPC always uses HTTP/2. */
  httpVersion?: "1.1" | "2" | 1.1 | 2;
  /** Body format; default `json` for `triple` and `connect`, `grpc+proto` for `grpc`, `proto` for `grpc-web`. */
  contentType?: ClientContentType;
  /**
   * How IDL-less methods serialize their arguments and results for a Dubbo Java provider:
   * Dubbo's TripleRequestWrapper over gRPC (`grpc+proto`) with each argument in `hessian2`
   * (Java's default), `fastjson2` (JSONB) or `json`. Implies `protocol: "grpc"`; classes need
   * `@JavaClass`. Unset: the derived protobuf messages (docs/schema.md).
   */
  serialization?: "hessian2" | "fastjson2" | "json";
  /** Default call timeout in ms (whole call, across retries); 0 or left out: none. */
  timeoutMs?: number;
  /** `tri-service-version` to select. */
  version?: string;
  /** `tri-service-group` to select. */
  group?: string;
  /** Sends `authorization: Bearer <token>`. */
  token?: TokenSource;
  /** Metadata sent with every call. */
  metadata?: MetadataInit;
  /**
   * Retries of the failover and failback policies; default 2 (3 attempts). Only `unavailable`
   * and `unknown` errors are retried, never after a response message arrived; a connection that
   * broke after the request was sent only for idempotent methods (the handler may have run).
   */
  retries?: number;
  /**
   * Per-method settings by wire name or JavaScript name, over the method's own
   * (`@Method({ retries })`) and the client's: `{ charge: { retries: 0, timeoutMs: 2000 } }`.
   */
  methods?: Readonly<Record<string, { readonly retries?: number; readonly timeoutMs?: number }>>;
  /** Cluster policy: failover (default), failfast, failsafe, failback, forking, broadcast. */
  cluster?: ClusterPolicyName | ClusterPolicy;
  /**
   * Load balancer: peakewma (default: two random providers, the one with the lower latency ×
   * calls in flight wins), random (weighted), roundrobin, leastactive, consistenthash, p2c.
   */
  loadBalance?: LoadBalancerName | LoadBalancer;
  /**
   * Outlier detection: a provider whose calls time out or break `consecutiveFailures` (5) times
   * in a row gets no calls for `baseEjectionMs` (5000) × times ejected, at most `maxEjectionMs`
   * (60 000), then one probe call at a time until one is answered; at most `maxEjectionPercent`
   * (50) of the providers at once, never the last. `false` turns it off. On by default.
   */
  outlierDetection?: OutlierDetectionOptions;
  /** Parallel calls of the forking policy; default 2. */
  forks?: number;
  /** Request compression: `gzip`, `deflate`, `br` (Triple HTTP only) or `identity` (default). */
  compression?: "gzip" | "deflate" | "br" | "identity";
  /** The service name, when it differs from the class's `@Service` name. */
  serviceName?: string;
  /** Largest response body or message accepted (after decompression); default 4 MiB. */
  maxResponseBytes?: number;
  /** HTTP/2 keepalive ping interval in ms; default 30 000, 0 disables. */
  keepaliveMs?: number;
  /** How long a ping may go unanswered before the session is dropped, ms; default 10 000. */
  keepaliveTimeoutMs?: number;
  /** Connection timeout in ms; default 10 000. */
  connectTimeoutMs?: number;
  /** First back-off of a provider that refused a connection, ms; default 1000, doubling to 30 s. */
  downBackoffMs?: number;
  /** Interval of the failback policy's background retries, ms; default 5000. */
  failbackIntervalMs?: number;
  /** TLS options for `https://` providers (ca, cert, key, servername, rejectUnauthorized …). */
  tls?: tls.ConnectionOptions;
  /** Client interceptors, outermost first. */
  interceptors?: readonly ClientInterceptor[];
  /** Where the client logs (pino's or console's shape); default the console, one line per cause per minute. */
  logger?: Logger;
  /** OpenTelemetry: providers and propagator. Default: the global ones (no cost without an SDK). */
  telemetry?: TelemetryOptions;
  /**
   * What the client's time-based policy reads as now (epoch ms): providers' warm-up, back-off
   * after a refused connection, outlier ejection and the default logger's repeat window. Default
   * the system clock (`Date.now()`). Tests pass one they move by hand; timeouts, deadlines and
   * retry timers stay on real timers (docs/client.md, "The clock").
   */
  clock?: Clock;
  /** Options of `protocol: "websocket"`. */
  websocket?: ClientWebSocketOptions;
}

/**
 * createClient's `websocket` group (Triple over WebSocket). `endOfRequest`: how a client or bidi
 * stream's request side ends: `"message"` (default: an empty text message, which our servers
 * and browsers' WebSockets need, since a close ends the exchange for them) or `"close"` (a close
 * with 1000, as Dubbo Java 3.3's WebSocket transport reads it; the answer is still read, but it
 * must come within ws's 30 s close timeout).
 */
export interface ClientWebSocketOptions {
  endOfRequest?: "message" | "close";
}
