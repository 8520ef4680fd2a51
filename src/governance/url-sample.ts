// Owns `urlSample`, `rawParameter`, `urlAddress`. `URL.getRawParameter(key)`: the special keys
// first (port as text, "0" when none), then the parameter. Must not change: Dubbo 3.3's rule
// semantics (the oracle tests compare with Dubbo Java).
import type { DubboUrl } from "../registry/url.js";

/**
 * A URL as Dubbo's condition matchers read it (`URL.toOriginalMap()`): its parameters plus
 * `protocol`, `host`, `port` (when > 0), `path` and `address` (`host:port`, or the host when
 * there is no port). Cached per URL object: provider URLs are read on every route.
 */
const samples = new WeakMap<DubboUrl, ReadonlyMap<string, string>>();

export function urlSample(url: DubboUrl): ReadonlyMap<string, string> {
  let s = samples.get(url);
  if (s === undefined) {
    const m = new Map<string, string>(Object.entries(url.params));
    if (url.protocol) m.set("protocol", url.protocol);
    if (url.host) m.set("host", javaHost(url.host));
    if (url.port > 0) m.set("port", String(url.port));
    m.set("path", url.path);
    if (url.host) m.set("address", urlAddress(url));
    s = m;
    samples.set(url, s);
  }
  return s;
}

/** `URL.getRawParameter(key)`: the special keys first (port as text, "0" when none), then the parameter. */
export function rawParameter(url: DubboUrl, key: string): string | undefined {
  switch (key) {
    case "protocol":
      return url.protocol;
    case "host":
      return javaHost(url.host);
    case "port":
      return String(url.port);
    case "path":
      return url.path;
    case "username":
    case "password":
      return undefined;
    default:
      return url.params[key];
  }
}

/** The host as Java's URL keeps it: an IPv6 address in brackets (`[2001:db8::1]`), as it was written. */
function javaHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/** `host:port` of a provider, as Dubbo's `URL.getAddress()` (an IPv6 host in brackets). */
export function urlAddress(url: DubboUrl): string {
  const host = javaHost(url.host);
  return url.port > 0 ? `${host}:${url.port}` : host;
}
