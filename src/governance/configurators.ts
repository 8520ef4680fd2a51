// Owns `serviceKeyOf`, `parseConfigurators`, `configureUrl`, `isDisabled`.
// `[group/]interface[:version]`, Java's `URL.getServiceKey()`. Must not change: Dubbo 3.3's rule
// semantics (the oracle tests compare with Dubbo Java).
import { type DubboUrl, hostPort, parseUrl } from "../registry/url.js";
import { asBool, asRecord, asText, asTextList, parseRuleYaml } from "./config-yaml.js";

/**
 * Dubbo's override rules (`<interface>:<version>:<group>.configurators`, `<app>.configurators`),
 * as Java's `ConfigParser` turns them into `override://` URLs and `AbstractConfigurator` /
 * `OverrideConfigurator` apply them to a provider URL: each `configs` item × address is one
 * entry; an entry applies when its side is the URL's side, its host is `0.0.0.0` or the host
 * matched (the consumer's own on the consumer side, the provider's on the provider side), its
 * `providerAddresses`, application and service match, and (v3.0) its `match` passes; its
 * `parameters` are then written over the URL's. Entries apply in Java's order (host string,
 * then `priority`), so a later one wins.
 */
export interface ConfiguratorEntry {
  readonly side: string;
  readonly host: string;
  readonly port: number;
  /** `*` or `[group/]interface[:version]`. */
  readonly serviceKey: string;
  /** Undefined or `*`: any application. */
  readonly application: string | undefined;
  /** The `providerAddresses` list joined with `,` (Java matches it as text), or undefined. */
  readonly providerAddresses: string | undefined;
  readonly parameters: Readonly<Record<string, string>>;
  readonly configVersion: string;
  readonly enabled: boolean;
  readonly priority: number;
  readonly match: ConditionMatch | undefined;
}

/** v3.0's `match`: every part given must pass. */
interface ConditionMatch {
  readonly address?: StringMatch & { cird?: string };
  readonly providerAddress?: StringMatch;
  readonly service?: readonly StringMatch[];
  readonly app?: readonly StringMatch[];
  readonly param?: readonly { key: string; value: StringMatch }[];
}

/** Dubbo's `StringMatch`. */
interface StringMatch {
  exact?: string;
  prefix?: string;
  regex?: string;
  noempty?: string;
  empty?: string;
  wildcard?: string;
}

/** Parameters that steer matching, never written into the URL (Java's `genConditionKeys`). */
const CONDITION_KEYS: ReadonlySet<string> = new Set([
  "category",
  "check",
  "dynamic",
  "enabled",
  "group",
  "version",
  "application",
  "side",
  "configVersion",
  "compatible_config",
  "interfaces",
]);

/** The most entries one rule may make (items × addresses × applications or services). */
const MAX_ENTRIES = 1000;

/** `[group/]interface[:version]`, Java's `URL.getServiceKey()`. */
function serviceKeyOf(iface: string, group: string | undefined, version: string | undefined): string {
  return `${group ? `${group}/` : ""}${iface}${version ? `:${version}` : ""}`;
}

/** Splits a YAML `key` / `services` entry `[group/]interface[:version]`. */
function splitService(text: string): { iface: string; group: string; version: string } {
  const slash = text.indexOf("/");
  const group = slash >= 0 ? text.slice(0, slash) : "";
  const rest = slash >= 0 ? text.slice(slash + 1) : text;
  const colon = rest.indexOf(":");
  return { iface: colon >= 0 ? rest.slice(0, colon) : rest, group, version: colon >= 0 ? rest.slice(colon + 1) : "" };
}

/**
 * Parses a configurators rule: Dubbo's YAML (`configVersion`, `scope`, `key`, `enabled`,
 * `configs`), or a JSON array of `override://` URLs (the 2.6 form). Throws with what is wrong.
 */
export function parseConfigurators(text: string): ConfiguratorEntry[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("[") && trimmed.includes("override://")) return parseOverrideUrls(trimmed);
  const doc = asRecord(parseRuleYaml(text));
  if (!doc) throw new Error("a configurators rule is a mapping with configVersion, scope, key and configs");
  const scope = asText(doc.scope);
  const key = asText(doc.key);
  if (scope !== "service" && scope !== "application") throw new Error(`scope must be "service" or "application", got ${JSON.stringify(doc.scope)}`);
  if (!key) throw new Error("key is missing: the service ([group/]interface[:version]) or the application the rule is about");
  if (!Array.isArray(doc.configs)) throw new Error("configs is missing: a list of { side, addresses, parameters, … }");
  const base: RuleBase = { configVersion: asText(doc.configVersion) ?? "", enabled: asBool(doc.enabled, true), scope, key };
  const out: ConfiguratorEntry[] = [];
  for (const [i, raw] of doc.configs.entries()) {
    const item = asRecord(raw);
    if (!item) throw new Error(`configs[${i}] is not a mapping`);
    for (const e of itemEntries(item, base, i)) {
      out.push(e);
      if (out.length > MAX_ENTRIES) throw new Error(`the rule makes more than ${MAX_ENTRIES} entries (items × addresses × applications)`);
    }
  }
  return sortEntries(out);
}

interface RuleBase {
  readonly configVersion: string;
  readonly enabled: boolean;
  readonly scope: "service" | "application";
  readonly key: string;
}

/** One `configs` item → its entries (one per address × application, or × service at application scope). */
function itemEntries(item: Record<string, unknown>, base: RuleBase, i: number): ConfiguratorEntry[] {
  const params = asRecord(item.parameters);
  const parameters: Record<string, string> = {};
  for (const [k, v] of Object.entries(params ?? {})) {
    const t = asText(v);
    if (t !== undefined) parameters[k] = t;
  }
  if (Object.keys(parameters).length === 0) throw new Error(`configs[${i}]: parameters is missing or empty: name at least one parameter to change`);
  const addresses = asTextList(item.addresses);
  const providers = asTextList(item.providerAddresses);
  const common = {
    side: asText(item.side) ?? "",
    configVersion: base.configVersion,
    enabled: asBool(item.enabled, base.enabled),
    priority: Number(asText(parameters.priority) ?? 0) || 0,
    providerAddresses: providers.length > 0 ? providers.join(",") : undefined,
    parameters,
    match: base.configVersion.startsWith("v3.0") ? conditionMatch(item.match) : undefined,
  };
  const targets: { serviceKey: string; application: string | undefined }[] = [];
  if (base.scope === "service") {
    const s = splitService(base.key);
    const apps = asTextList(item.applications);
    for (const application of apps.length > 0 ? apps : [undefined]) targets.push({ serviceKey: serviceKeyOf(s.iface, s.group, s.version), application });
  } else {
    const services = asTextList(item.services);
    for (const svc of services.length > 0 ? services : ["*"]) {
      const s = splitService(svc);
      targets.push({ serviceKey: svc === "*" ? "*" : serviceKeyOf(s.iface, s.group, s.version), application: base.key });
    }
  }
  const out: ConfiguratorEntry[] = [];
  for (const addr of addresses.length > 0 ? addresses : ["0.0.0.0"]) {
    const { host, port } = splitAddress(addr);
    for (const t of targets) out.push({ ...common, ...t, host, port });
  }
  return out;
}

/** `host[:port]` (IPv6 in brackets). */
function splitAddress(addr: string): { host: string; port: number } {
  try {
    const u = parseUrl(`override://${addr}`);
    return { host: u.host, port: u.port };
  } catch {
    return { host: addr, port: 0 };
  }
}

/** The 2.6 form: a JSON array of `override://host:port/service?k=v` URLs. */
function parseOverrideUrls(text: string): ConfiguratorEntry[] {
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch (e) {
    throw new Error(`not a JSON array of override:// URLs: ${(e as Error).message}`);
  }
  if (!Array.isArray(list)) throw new Error("not a JSON array of override:// URLs");
  if (list.length > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} override URLs`);
  return sortEntries(list.filter((u): u is string => typeof u === "string").map(overrideEntry));
}

/** An `override://` URL as an entry. */
function overrideEntry(text: string): ConfiguratorEntry {
  return overrideUrlEntry(parseUrl(text));
}

/** A parsed `override://` URL (a 2.6 `configurators` node) as an entry. */
export function overrideUrlEntry(u: DubboUrl): ConfiguratorEntry {
  const p = u.params;
  const parameters: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) if (k !== "providerAddresses" && k !== "priority") parameters[k] = v;
  return {
    side: p.side ?? "",
    host: u.host,
    port: u.port,
    serviceKey: u.path === "*" || u.path === "" ? "*" : serviceKeyOf(p.interface ?? u.path, p.group, p.version),
    application: p.application,
    providerAddresses: p.providerAddresses,
    parameters,
    configVersion: p.configVersion ?? "",
    enabled: p.enabled !== "false",
    priority: Number(p.priority ?? 0) || 0,
    match: undefined,
  };
}

/** Java's order: by host string, then by priority; applied in order, so the last wins. */
function sortEntries(list: ConfiguratorEntry[]): ConfiguratorEntry[] {
  return list.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.priority - b.priority));
}

function conditionMatch(x: unknown): ConditionMatch | undefined {
  const m = asRecord(x);
  if (!m) return undefined;
  const list = (v: unknown) => (Array.isArray(asRecord(v)?.oneof) ? (asRecord(v)!.oneof as unknown[]).map((s) => asRecord(s) ?? {}) : undefined);
  const params = Array.isArray(m.param)
    ? m.param.map((p) => ({ key: asText(asRecord(p)?.key) ?? "", value: (asRecord(asRecord(p)?.value) ?? {}) as StringMatch }))
    : undefined;
  return {
    address: asRecord(m.address) as ConditionMatch["address"],
    providerAddress: asRecord(m.providerAddress) as StringMatch | undefined,
    service: list(m.service) as StringMatch[] | undefined,
    app: list(m.app) as StringMatch[] | undefined,
    param: params,
  };
}

/** Dubbo's `StringMatch.isMatch`: the first kind given decides. */
function stringMatches(m: StringMatch, value: string | undefined): boolean {
  if (m.exact !== undefined) return value !== undefined && value === String(m.exact);
  if (m.prefix !== undefined) return value?.startsWith(String(m.prefix)) === true;
  if (m.regex !== undefined) return value !== undefined && safeRegex(String(m.regex), value);
  if (m.wildcard !== undefined) return value !== undefined && wildcard(String(m.wildcard), value);
  if (m.empty !== undefined) return value === undefined || value === "";
  if (m.noempty !== undefined) return value !== undefined && value !== "";
  return false;
}

/** A regex from a rule, matched whole (Java's `matches`); a bad or overlong one matches nothing. */
function safeRegex(source: string, value: string): boolean {
  if (source.length > 256) return false;
  try {
    return new RegExp(`^(?:${source})$`).test(value);
  } catch {
    return false;
  }
}

/** `*` any, or the value with `*` standing for any run of characters. */
function wildcard(pattern: string, value: string): boolean {
  if (pattern === "*") return true;
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === value;
  let at = 0;
  for (const [i, part] of parts.entries()) {
    if (i === 0) {
      if (!value.startsWith(part)) return false;
      at = part.length;
    } else if (i === parts.length - 1) {
      return value.length - part.length >= at && value.endsWith(part);
    } else {
      const found = value.indexOf(part, at);
      if (found < 0) return false;
      at = found + part.length;
    }
  }
  return true;
}

/** An IPv4 address within `a.b.c.d/n`. */
function inCidr(cidr: string, host: string): boolean {
  const [net, bitsText] = cidr.split("/");
  const bits = bitsText === undefined ? 32 : Number(bitsText);
  const toInt = (ip: string) => {
    const p = ip.split(".").map(Number);
    return p.length === 4 && p.every((n) => Number.isInteger(n) && n >= 0 && n < 256) ? ((p[0] << 24) | (p[1] << 16) | (p[2] << 8) | p[3]) >>> 0 : undefined;
  };
  const a = toInt(net);
  const b = toInt(host);
  if (a === undefined || b === undefined || !(bits >= 0 && bits <= 32)) return false;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (a & mask) === (b & mask);
}

function matchPasses(m: ConditionMatch, host: string, url: DubboUrl): boolean {
  const a = m.address;
  if (a) {
    const ok = a.cird !== undefined ? inCidr(String(a.cird), host) : a.wildcard !== undefined ? wildcard(String(a.wildcard), host) : stringMatches(a, host);
    if (!ok) return false;
  }
  if (m.providerAddress && !stringMatches(m.providerAddress, hostPort(url.host, url.port))) return false;
  const svc = serviceKeyOf(url.params.interface ?? url.path, url.params.group, url.params.version);
  if (m.service && !m.service.some((s) => stringMatches(s, svc))) return false;
  if (m.app && !m.app.some((s) => stringMatches(s, url.params.application))) return false;
  return !m.param || m.param.every((p) => stringMatches(p.value, url.params[p.key]));
}

/** Java's `isV27ConditionMatchOrUnset`: providerAddresses, application and service key. */
function v27Matches(e: ConfiguratorEntry, url: DubboUrl): boolean {
  if (e.providerAddresses) {
    const address = hostPort(url.host, url.port);
    const ok = e.providerAddresses
      .split(",")
      .some((a) => a === address || a === "0.0.0.0" || a === "0.0.0.0:*" || a === `0.0.0.0:${url.port}` || a === url.host);
    if (!ok) return false;
  }
  if (e.application !== undefined && e.application !== "*" && e.application !== url.params.application) return false;
  const svc = serviceKeyOf(url.params.interface ?? url.path, url.params.group, url.params.version);
  return e.serviceKey === "*" || e.serviceKey === svc;
}

/** The host an entry is matched against, or undefined when it does not apply to this URL's side. */
function hostToMatch(e: ConfiguratorEntry, url: DubboUrl, localHost: string): string | undefined {
  const side = url.params.side ?? "";
  if (e.configVersion) {
    if (side !== e.side) return undefined;
    return side === "consumer" ? localHost : side === "provider" ? url.host : undefined;
  }
  if (e.port !== 0) return url.port === e.port ? url.host : undefined;
  if (side === "consumer") return localHost;
  return side === "provider" ? "0.0.0.0" : undefined;
}

/** One entry applied to `url` (the same object when it does not apply). */
function applyEntry(e: ConfiguratorEntry, url: DubboUrl, localHost: string): DubboUrl {
  if (!e.enabled) return url;
  const host = hostToMatch(e, url, localHost);
  if (host === undefined || (e.host !== "0.0.0.0" && e.host !== host)) return url;
  if (!v27Matches(e, url)) return url;
  if (e.match && !matchPasses(e.match, host, url)) return url;
  const params: Record<string, string> = { ...url.params };
  for (const [k, v] of Object.entries(e.parameters)) if (!CONDITION_KEYS.has(k) && !k.startsWith("~")) params[k] = v;
  return { ...url, params };
}

/**
 * `url` with every entry of `lists` that applies, list after list (a later list wins: Java
 * applies the application's rule, then the service's). `localHost` is this process's address
 * (matched by consumer-side entries).
 */
export function configureUrl(url: DubboUrl, lists: readonly (readonly ConfiguratorEntry[])[], localHost: string): DubboUrl {
  let out = url;
  for (const list of lists) for (const e of list) out = applyEntry(e, out, localHost);
  return out;
}

/** True when a configured URL says the provider is off (`disabled=true` or `enabled=false`). */
export function isDisabled(url: DubboUrl): boolean {
  return url.params.disabled === "true" || url.params.enabled === "false";
}
