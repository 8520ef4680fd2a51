// Owns `METADATA_V2_VERSION`, `EMPTY_REVISION`, `META`, `calRevision`, … The version
// MetadataServiceV2 answers to (`meta-v`), and Dubbo's protocol version. Must not change: the
// ZooKeeper paths, URL encodings and metadata Apache Dubbo reads and writes.
import { createHash } from "node:crypto";
import { VERSION } from "../protocol/version.js";
import type { DubboUrl } from "./url.js";

/**
 * Application-level ("instance") service discovery in Dubbo 3's layout: an application's
 * instances under `/services/<application>/<host>:<port>` (Curator's ServiceInstance JSON), the
 * services each instance exports in its *metadata* (`MetadataInfo`, fetched by revision from the
 * instance's MetadataServiceV2 or from the metadata report), and the interface → application
 * mapping under `/dubbo/mapping/<interface>`.
 */

/** One exported service in an application's metadata (Dubbo's `MetadataInfo.ServiceInfo`). */
export interface ServiceInfo {
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly protocol: string;
  readonly port: number;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
}

/** An application's metadata at one revision (Dubbo's `MetadataInfo`), keyed by match key. */
export interface MetadataInfo {
  readonly app: string;
  readonly revision: string;
  readonly services: Readonly<Record<string, ServiceInfo>>;
}

/** One instance as read from `/services/<application>/<id>`. */
export interface ServiceInstance {
  readonly app: string;
  readonly host: string;
  readonly port: number;
  readonly metadata: Readonly<Record<string, string>>;
}

/** The version MetadataServiceV2 answers to (`meta-v`), and Dubbo's protocol version. */
export const METADATA_V2_VERSION = "2.0.0";
const DUBBO_PROTOCOL_VERSION = "2.0.2";
/** Revision of an application exporting nothing (`MetadataInfo.EMPTY_REVISION`). */
export const EMPTY_REVISION = "0";

/** Instance metadata keys (`ServiceInstanceMetadataUtils`). */
export const META = {
  endpoints: "dubbo.endpoints",
  revision: "dubbo.metadata.revision",
  storageType: "dubbo.metadata.storage-type",
  urlParams: "dubbo.metadata-service.url-params",
  version: "meta-v",
  timestamp: "timestamp",
} as const;

/**
 * Service parameters left out of the metadata (`DefaultMetadataParamsFilter.serviceParamsExcluded`):
 * a key equal to one of these (any case), or containing `.<one of these>`.
 */
const EXCLUDED_PARAMS = [
  "monitor",
  "bind.ip",
  "bind.port",
  "qos.enable",
  "qos.host",
  "qos.port",
  "qos.accept.foreign.ip",
  "validation",
  "interfaces",
  "pid",
  "timestamp",
  "heartbeat.timeout",
  "ipv6",
];

function serviceParams(params: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) {
    const lower = k.toLowerCase();
    if (EXCLUDED_PARAMS.some((x) => lower === x || k.includes(`.${x}`))) continue;
    out[k] = v;
  }
  return out;
}

/** Dubbo's service key: `group/interface:version`, each part only when set. */
function serviceKey(name: string, group: string, version: string): string {
  return `${group ? `${group}/` : ""}${name}${version ? `:${version}` : ""}`;
}

/** Dubbo's match key: the service key plus `:protocol`. */
function matchKey(s: Pick<ServiceInfo, "name" | "group" | "version" | "protocol">): string {
  return `${serviceKey(s.name, s.group, s.version)}${s.protocol ? `:${s.protocol}` : ""}`;
}

/** A provider URL's entry in the metadata (`new ServiceInfo(url, filters)`). */
function serviceInfoOf(url: DubboUrl): ServiceInfo {
  return {
    name: url.params.interface ?? url.path,
    group: url.params.group ?? "",
    version: url.params.version ?? "",
    protocol: url.protocol,
    port: url.port,
    path: url.path,
    params: serviceParams(url.params),
  };
}

/** Java's `TreeMap.toString()`: `{a=1, b=2}`, keys in natural (UTF-16) order. */
function javaMapString(m: Readonly<Record<string, string>>): string {
  return `{${Object.keys(m)
    .sort()
    .map((k) => `${k}=${m[k]}`)
    .join(", ")}}`;
}

/**
 * `MetadataInfo.calAndGetRevision`: the MD5 (lower-case hex) of the application name followed,
 * for every service in match-key order, by `matchKey + port + path + params` (params as Java's
 * sorted map prints them); "0" when nothing is exported.
 */
export function calRevision(app: string, services: readonly ServiceInfo[]): string {
  if (services.length === 0) return EMPTY_REVISION;
  const sorted = [...services].sort((a, b) => (matchKey(a) < matchKey(b) ? -1 : matchKey(a) > matchKey(b) ? 1 : 0));
  let text = app;
  for (const s of sorted) text += `${matchKey(s)}${s.port}${s.path}${javaMapString(s.params)}`;
  return createHash("md5").update(text, "utf8").digest("hex");
}

/** The metadata of an application exporting `urls`. */
export function metadataInfo(app: string, urls: readonly DubboUrl[]): MetadataInfo {
  const list = urls.map(serviceInfoOf);
  const services: Record<string, ServiceInfo> = {};
  for (const s of list) services[matchKey(s)] = s;
  return { app, revision: calRevision(app, Object.values(services)), services };
}

/** The metadata as Java's metadata report stores it (`MetadataInfo` JSON; empty group/version left out). */
export function metadataJson(info: MetadataInfo): string {
  const services: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(info.services)) {
    services[k] = {
      name: s.name,
      ...(s.group ? { group: s.group } : {}),
      ...(s.version ? { version: s.version } : {}),
      protocol: s.protocol,
      port: s.port,
      path: s.path,
      params: s.params,
    };
  }
  return JSON.stringify({ app: info.app, revision: info.revision, services });
}

/** Reads metadata JSON (the report's, or a MetadataServiceV2 answer as a plain object). */
export function toMetadataInfo(raw: unknown, revision: string): MetadataInfo {
  const o = (typeof raw === "string" ? JSON.parse(raw) : raw) as Record<string, unknown>;
  const services: Record<string, ServiceInfo> = {};
  const rawServices = (o?.services ?? {}) as Record<string, Record<string, unknown>>;
  for (const [k, s] of Object.entries(rawServices)) {
    if (!s || typeof s !== "object") continue;
    services[k] = {
      name: String(s.name ?? ""),
      group: String(s.group ?? ""),
      version: String(s.version ?? ""),
      protocol: String(s.protocol ?? ""),
      port: Number(s.port ?? 0),
      path: String(s.path ?? s.name ?? ""),
      params: Object.fromEntries(Object.entries((s.params ?? {}) as Record<string, unknown>).map(([pk, pv]) => [pk, String(pv)])),
    };
  }
  return { app: String(o?.app ?? ""), revision: String(o?.revision ?? revision), services };
}

/** What an instance node is built from. */
export interface InstanceInit {
  readonly app: string;
  readonly host: string;
  readonly port: number;
  readonly revision: string;
  readonly storage: "local" | "remote";
  /** Registration time, ms. */
  readonly timestamp: number;
}

/** An instance's metadata, sorted by key as Java writes it (`getSortedMetadata`). */
function instanceMetadata(o: InstanceInit): Record<string, string> {
  const urlParams = { dubbo: DUBBO_PROTOCOL_VERSION, release: VERSION, side: "provider", port: String(o.port), protocol: "tri" };
  const m: Record<string, string> = {
    [META.endpoints]: JSON.stringify([{ port: o.port, protocol: "tri" }]),
    [META.urlParams]: JSON.stringify(urlParams),
    [META.revision]: o.revision,
    [META.storageType]: o.storage,
    [META.version]: METADATA_V2_VERSION,
    [META.timestamp]: String(o.timestamp),
  };
  return Object.fromEntries(
    Object.keys(m)
      .sort()
      .map((k) => [k, m[k]]),
  );
}

/**
 * The instance node's data: Curator's ServiceInstance JSON as Java's `ZookeeperServiceDiscovery`
 * writes it (Jackson's field order, `sslPort`/`uriSpec` null, `serviceType` DYNAMIC).
 */
export function instanceJson(o: InstanceInit): string {
  const id = `${o.host}:${o.port}`;
  return JSON.stringify({
    name: o.app,
    id,
    address: o.host,
    port: o.port,
    sslPort: null,
    payload: { "@class": "org.apache.dubbo.registry.zookeeper.ZookeeperInstance", id, name: o.app, metadata: instanceMetadata(o) },
    registrationTimeUTC: o.timestamp,
    serviceType: "DYNAMIC",
    uriSpec: null,
  });
}

/** Reads an instance node's data (Java's or dubbo-go's JSON); undefined when it is not one. */
export function parseInstance(data: Buffer | string): ServiceInstance | undefined {
  try {
    const o = JSON.parse(data.toString()) as Record<string, unknown>;
    const payload = (o.payload ?? {}) as Record<string, unknown>;
    const rawMeta = (payload.metadata ?? {}) as Record<string, unknown>;
    const metadata = Object.fromEntries(Object.entries(rawMeta).map(([k, v]) => [k, String(v)]));
    const host = String(o.address ?? "");
    const port = Number(o.port);
    if (!host || !Number.isInteger(port) || port <= 0) return undefined;
    return { app: String(o.name ?? payload.name ?? ""), host, port, metadata };
  } catch {
    return undefined;
  }
}

/** The port and protocol the instance's MetadataService answers on (url-params, else the endpoints, else the instance port). */
export function metadataServiceEndpoint(inst: ServiceInstance): { port: number; protocol: string } {
  try {
    const p = JSON.parse(inst.metadata[META.urlParams] ?? "{}") as Record<string, string>;
    if (p.port && p.protocol) return { port: Number(p.port), protocol: p.protocol };
  } catch {
    // fall through
  }
  return { port: endpointPort(inst, "tri") ?? inst.port, protocol: "tri" };
}

/** The port an instance lists for `protocol` in `dubbo.endpoints`. */
function endpointPort(inst: ServiceInstance, protocol: string): number | undefined {
  try {
    const list = JSON.parse(inst.metadata[META.endpoints] ?? "[]") as { port: number; protocol: string }[];
    return list.find((e) => e.protocol === protocol)?.port;
  } catch {
    return undefined;
  }
}

/**
 * The provider URLs an instance offers according to its metadata: one per service, at the
 * instance's host and the service's port (else the instance's port for that protocol), with the
 * service's parameters (weight, enabled, warm-up…) and the instance's timestamp.
 */
export function instanceUrls(inst: ServiceInstance, info: MetadataInfo): DubboUrl[] {
  const out: DubboUrl[] = [];
  for (const s of Object.values(info.services)) {
    const port = s.port > 0 ? s.port : (endpointPort(inst, s.protocol) ?? inst.port);
    const params: Record<string, string> = { ...s.params, interface: s.name };
    if (s.group) params.group = s.group;
    if (s.version) params.version = s.version;
    if (inst.metadata.timestamp && !params.timestamp) params.timestamp = inst.metadata.timestamp;
    out.push({ protocol: s.protocol, host: inst.host, port, path: s.path || s.name, params });
  }
  return out;
}
