/**
 * Dubbo's URL form, as registries store it: `protocol://host:port/path?k=v&k=v`, parameters
 * sorted by key (Dubbo's `URL.toFullString`), and the whole string encoded like Java's
 * `URLEncoder` when it becomes a ZooKeeper node name.
 */
export interface DubboUrl {
  /** `tri` for a Triple provider, `consumer` for a consumer's own node. */
  readonly protocol: string;
  /** IP address or host name; IPv6 without brackets. */
  readonly host: string;
  /** 0 when the URL has none (consumer nodes). */
  readonly port: number;
  /** The interface name (`org.example.GreetService`). */
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
}

/** `host:port`, bracketing an IPv6 host. */
export function hostPort(host: string, port: number): string {
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return port > 0 ? `${h}:${port}` : h;
}

/**
 * The URL as Dubbo's `URL.toFullString()` writes it: parameters sorted by key, values trimmed and
 * not escaped, empty keys and empty values left out.
 */
export function toFullString(url: DubboUrl): string {
  const keys = Object.keys(url.params)
    .filter((k) => k !== "" && url.params[k] !== undefined && String(url.params[k]).trim() !== "")
    .sort();
  const query = keys.map((k) => `${k}=${String(url.params[k]).trim()}`).join("&");
  const base = `${url.protocol}://${hostPort(url.host, url.port)}/${url.path}`;
  return query ? `${base}?${query}` : base;
}

/**
 * Java's `URLEncoder.encode(s, "UTF-8")`: letters, digits and `. - * _` stay, a space becomes
 * `+`, every other UTF-8 byte `%XX` (upper case). This is how Dubbo names provider nodes.
 */
export function encodeComponent(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+");
}

/** The inverse of {@link encodeComponent}; tolerant of malformed escapes (kept as they are). */
export function decodeComponent(s: string): string {
  const plus = s.replace(/\+/g, " ");
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

/**
 * Parses a URL in Dubbo's form (`tri://10.0.0.5:50051/org.example.Greet?application=a&...`).
 * Throws a TypeError when there is no `protocol://`.
 */
export function parseUrl(text: string): DubboUrl {
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?]*)(\/[^?]*)?(?:\?(.*))?$/s.exec(text.trim());
  if (!m) throw new TypeError(`not a URL of the form protocol://host:port/path?params: ${JSON.stringify(text)}`);
  const [, protocol, authority, rawPath = "", query = ""] = m;
  const at = authority.lastIndexOf("@");
  const hp = at >= 0 ? authority.slice(at + 1) : authority;
  let host = hp;
  let port = 0;
  const v6 = /^\[([^\]]*)\](?::(\d+))?$/.exec(hp);
  if (v6) {
    host = v6[1];
    port = v6[2] ? Number(v6[2]) : 0;
  } else {
    const colon = hp.lastIndexOf(":");
    if (colon >= 0 && /^\d+$/.test(hp.slice(colon + 1))) {
      host = hp.slice(0, colon);
      port = Number(hp.slice(colon + 1));
    }
  }
  const params: Record<string, string> = {};
  for (const pair of query.split("&")) {
    if (!pair) continue;
    const eq = pair.indexOf("=");
    const k = eq < 0 ? pair : pair.slice(0, eq);
    const v = eq < 0 ? k : pair.slice(eq + 1);
    if (k) params[k] = v;
  }
  return { protocol, host, port, path: rawPath.replace(/^\//, ""), params };
}

/** Parses a ZooKeeper child name (an encoded URL); undefined when it is not a URL. */
export function parseNodeName(name: string): DubboUrl | undefined {
  try {
    return parseUrl(decodeComponent(name));
  } catch {
    return undefined;
  }
}

/** What a consumer asks for: the interface, and the version and group to match ("" = none, "*" = any). */
export interface ServiceKey {
  readonly interface: string;
  readonly version?: string;
  readonly group?: string;
}

function matchesList(wanted: string, actual: string): boolean {
  if (wanted === "*") return true;
  if (wanted.includes(",")) return wanted.split(",").some((w) => w.trim() === actual);
  return wanted === actual;
}

/**
 * Dubbo's provider match (`UrlUtils.isMatch`): same group (the consumer's `*` matches any, a
 * comma list matches any member), same version (`*` matches any; missing equals empty), and not
 * disabled (`enabled=false` or `disabled=true`). `empty://` placeholders never match.
 */
export function matchesService(key: ServiceKey, provider: DubboUrl): boolean {
  if (provider.protocol === "empty") return false;
  if (provider.params.enabled === "false" || provider.params.disabled === "true") return false;
  const iface = provider.params.interface ?? provider.path;
  if (iface !== key.interface && provider.path !== key.interface) return false;
  if (!matchesList(key.group ?? "", provider.params.group ?? "")) return false;
  return matchesList(key.version ?? "", provider.params.version ?? "");
}
