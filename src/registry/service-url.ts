// Owns `MAX_WEIGHT`, `isAnyHost`, `announcedHost`, `providerUrl`, … The largest weight a consumer
// gives a provider (100 times Dubbo's default of 100): a provider, or anyone who can write its node
// or metadata, announcing more … Must not change: the ZooKeeper paths, URL encodings and metadata
// Apache Dubbo reads and writes.
import { VERSION } from "../protocol/version.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { DubboUrl, ServiceKey } from "./url.js";
import { localAddress } from "../transport/local-address.js";
import { lowerFirst } from "../service/describe.js";

/**
 * The largest weight a consumer gives a provider (100 times Dubbo's default of 100): a provider,
 * or anyone who can write its node or metadata, announcing more (`weight=100000` takes 99.9 % of
 * the calls beside one provider of weight 100) is counted at this weight. Dubbo itself has no
 * bound (any Java int).
 */
export const MAX_WEIGHT = 10_000;

/** Dubbo's protocol version parameter (`dubbo=`), which Dubbo 3.x providers and consumers write. */
const DUBBO_PROTOCOL_VERSION = "2.0.2";

/**
 * The method names a Java interface would have: Dubbo lists `methods=` from the Java interface,
 * whose methods are lower-first (`sayHello`), sorted and without duplicates. Our servers accept
 * both `/Svc/sayHello` and `/Svc/SayHello`, so the lower-first name is callable either way.
 */
function methodNames(methods: readonly MethodDescriptor[]): string {
  const names = new Set(methods.map((m) => lowerFirst(m.name)));
  return [...names].sort().join(",");
}

/** True for the wildcard addresses a server binds to listen on every interface. */
export function isAnyHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "" || host === "[::]";
}

/**
 * The host a provider announces: the configured one; else, for a wildcard bind (0.0.0.0, ::),
 * the first non-internal IPv4 address of this machine (as Dubbo does); else the bound host.
 */
export function announcedHost(boundHost: string, configured: string | undefined): string {
  if (configured) return configured;
  return isAnyHost(boundHost) ? localAddress() : boundHost;
}

/** What a provider URL is built from. */
export interface ProviderUrlInit {
  readonly interface: string;
  readonly version: string;
  readonly group: string;
  readonly methods: readonly MethodDescriptor[];
  readonly host: string;
  readonly port: number;
  readonly application: string;
  /** The server listens on every interface. */
  readonly anyhost: boolean;
  readonly weight?: number;
  /** Extra parameters, written as given (over the computed ones). */
  readonly params?: Readonly<Record<string, string>>;
}

/**
 * A Triple provider's URL in Dubbo's form. `version` and `group` are written only when set (an
 * empty `version=` would not match a Java consumer that sets none); `release` is the triple-rpc
 * version; `weight` feeds the consumers' load balancers (Dubbo's default is 100).
 */
export function providerUrl(o: ProviderUrlInit): DubboUrl {
  const params: Record<string, string> = {
    anyhost: String(o.anyhost),
    application: o.application,
    deprecated: "false",
    dubbo: DUBBO_PROTOCOL_VERSION,
    dynamic: "true",
    generic: "false",
    interface: o.interface,
    methods: methodNames(o.methods) || "*",
    pid: String(process.pid),
    // What a Java consumer serializes IDL-less calls in: Dubbo picks the first of these it has.
    "prefer.serialization": "hessian2,fastjson2",
    release: VERSION,
    serialization: "hessian2",
    side: "provider",
    timestamp: String(Date.now()),
    weight: String(o.weight ?? 100),
  };
  if (o.version) params.version = o.version;
  if (o.group) params.group = o.group;
  Object.assign(params, o.params);
  return { protocol: "tri", host: o.host, port: o.port, path: o.interface, params };
}

/** A consumer's own node (`consumer://<ip>/<interface>?category=consumers&check=false…`), as Dubbo registers it. */
export function consumerUrl(key: ServiceKey, application: string, methods: readonly MethodDescriptor[]): DubboUrl {
  const params: Record<string, string> = {
    application,
    category: "consumers",
    check: "false",
    dubbo: DUBBO_PROTOCOL_VERSION,
    interface: key.interface,
    methods: methodNames(methods) || "*",
    pid: String(process.pid),
    // What a Java consumer serializes IDL-less calls in: Dubbo picks the first of these it has.
    "prefer.serialization": "hessian2,fastjson2",
    release: VERSION,
    serialization: "hessian2",
    side: "consumer",
    timestamp: String(Date.now()),
  };
  if (key.version) params.version = key.version;
  if (key.group) params.group = key.group;
  return { protocol: "consumer", host: localAddress(), port: 0, path: key.interface, params };
}
