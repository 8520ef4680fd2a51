// Owns `CORS_ALLOWED_HEADERS`, `CORS_EXPOSED_HEADERS`, `Cors`. Request headers a browser must be
// allowed to send to call Triple, Connect and gRPC-Web endpoints. Must not change: limits before
// reading, authorization before decoding (docs/security.md).
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { Exchange, OutHeaders } from "../transport/server/exchange.js";
import { sendHttpError } from "../runtime/http-error.js";

/** CORS options of the server (off unless given). */
export interface CorsOptions {
  /** Allowed origins: exact strings, `*`, `https://*.example.com` patterns, or a predicate. */
  origins: readonly string[] | "*" | ((origin: string) => boolean);
  /** Request headers allowed besides the built-in list. */
  allowedHeaders?: readonly string[];
  /** Response headers exposed besides the built-in list. */
  exposedHeaders?: readonly string[];
  /** Preflight cache lifetime, seconds. Default 7200. */
  maxAgeSeconds?: number;
  /** Allow credentials (cookies, HTTP auth). Default false; with it `*` echoes the origin. */
  credentials?: boolean;
}

/** Request headers a browser must be allowed to send to call Triple, Connect and gRPC-Web endpoints. */
export const CORS_ALLOWED_HEADERS = [
  "content-type",
  "content-encoding",
  "accept",
  "accept-encoding",
  "authorization",
  "tri-protocol-version",
  "tri-service-version",
  "tri-service-group",
  "tri-service-timeout",
  "rest-service-timeout",
  "grpc-timeout",
  "grpc-encoding",
  "grpc-accept-encoding",
  "x-user-agent",
  "x-grpc-web",
  "connect-protocol-version",
  "connect-timeout-ms",
  "connect-content-encoding",
  "connect-accept-encoding",
  // MCP's streamable HTTP (createServer({ mcp })): a browser client sends both.
  "mcp-protocol-version",
  "mcp-session-id",
  // W3C trace context and baggage, for browser tracing (OpenTelemetry's fetch instrumentation).
  "traceparent",
  "tracestate",
  "baggage",
] as const;

/** Response headers a browser must be allowed to read. */
export const CORS_EXPOSED_HEADERS = [
  "grpc-status",
  "grpc-message",
  "grpc-status-details-bin",
  "grpc-encoding",
  "content-encoding",
  "tri-service-version",
  "tri-service-group",
  "tri-protocol-version",
  "connect-content-encoding",
  "connect-accept-encoding",
] as const;

/** An origin as RFC 6454 serialises it: `scheme://host[:port]`, nothing else. */
interface Origin {
  scheme: string;
  host: string;
  /** The port, or "" for the scheme's default. */
  port: string;
}

const ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)(?::(\d{1,5}))?$/;
const DEFAULT_PORTS: Record<string, string> = { http: "80", https: "443" };

/** Parses a serialised origin; undefined for anything else (paths, fragments, userinfo, junk). */
function parseOrigin(text: string): Origin | undefined {
  const m = ORIGIN.exec(text.toLowerCase());
  if (!m) return undefined;
  const port = m[3] === undefined || m[3] === DEFAULT_PORTS[m[1]] ? "" : String(Number(m[3]));
  return { scheme: m[1], host: m[2], port };
}

/**
 * A pattern origin: `https://*.example.com` (any subdomain, on a label boundary) and/or `:*`
 * (any port). Compared structurally, never as text, so `https://evil.com#.example.com` or
 * `https://evilexample.com` do not pass `https://*.example.com`.
 */
function patternMatcher(pattern: string): (o: Origin) => boolean {
  const anyPort = pattern.endsWith(":*");
  const rest = anyPort ? pattern.slice(0, -2) : pattern;
  const wildHost = /^([a-z][a-z0-9+.-]*:\/\/)\*\./i.exec(rest);
  const base = parseOrigin(wildHost ? `${wildHost[1]}${rest.slice(wildHost[0].length)}` : rest);
  if (!base || (!wildHost && !anyPort)) {
    throw new TypeError(
      `CORS origin pattern "${pattern}" is not supported: use "scheme://*.domain" (any subdomain), "scheme://host:*" (any port), or an exact origin`,
    );
  }
  const suffix = `.${base.host}`;
  return (o) =>
    o.scheme === base.scheme &&
    (anyPort || o.port === base.port) &&
    (wildHost ? o.host.endsWith(suffix) && o.host.length > suffix.length : o.host === base.host);
}

function originMatcher(origins: CorsOptions["origins"]): (origin: string) => boolean {
  if (origins === "*") return () => true;
  if (typeof origins === "function") return origins;
  const exact = new Set<string>();
  const patterns: ((o: Origin) => boolean)[] = [];
  for (const o of origins) {
    if (o === "*") return () => true;
    if (o.includes("*")) patterns.push(patternMatcher(o));
    else exact.add(o.toLowerCase());
  }
  return (origin) => {
    if (exact.has(origin.toLowerCase())) return true;
    if (patterns.length === 0) return false;
    const parsed = parseOrigin(origin);
    return parsed !== undefined && patterns.some((p) => p(parsed));
  };
}

/**
 * Access-Control-Expose-Headers has no prefix wildcard, so a handler's own `tri-*` / `grpc-*`
 * response headers (e.g. `tri-trace-id`) and unary trailers (`trailer-*`) are named in it
 * response by response.
 */
function exposeProtocolHeaders(h: OutHeaders): void {
  const listed = h["access-control-expose-headers"];
  if (typeof listed !== "string") return;
  let names: Set<string> | undefined;
  let more = "";
  for (const k in h) {
    const n = k.toLowerCase();
    if (!n.startsWith("tri-") && !n.startsWith("grpc-") && !n.startsWith("trailer-")) continue;
    names ??= new Set(listed.split(/\s*,\s*/));
    if (!names.has(n)) more += `, ${n}`;
  }
  if (more) h["access-control-expose-headers"] = listed + more;
}

/** Wraps an exchange so every response it sends carries the CORS headers. */
function withHeaders(ex: Exchange, extra: OutHeaders): Exchange {
  const add = (h: OutHeaders) => {
    for (const k in extra) if (h[k] === undefined) h[k] = extra[k];
    exposeProtocolHeaders(h);
    return h;
  };
  return new Proxy(ex, {
    get(target, prop) {
      if (prop === "respond") return (s: number, h: OutHeaders, b?: Uint8Array | string) => target.respond(s, add(h), b);
      if (prop === "start") return (s: number, h: OutHeaders, t: boolean) => target.start(s, add(h), t);
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/**
 * Cross-origin handling in front of every protocol: preflights answered here (204, or 403 for
 * an origin not allowed), actual requests from allowed origins get the CORS headers, from other
 * origins 403. Requests without `Origin` pass untouched.
 */
export class Cors {
  private readonly allowed: (origin: string) => boolean;
  private readonly allowHeaders: string;
  private readonly allowHeaderSet: Set<string>;
  private readonly exposeHeaders: string;

  constructor(private readonly options: CorsOptions) {
    this.allowed = originMatcher(options.origins);
    const allow = [...CORS_ALLOWED_HEADERS, ...(options.allowedHeaders ?? []).map((h) => h.toLowerCase())];
    this.allowHeaderSet = new Set(allow);
    this.allowHeaders = allow.join(", ");
    this.exposeHeaders = [...CORS_EXPOSED_HEADERS, ...(options.exposedHeaders ?? [])].join(", ");
  }

  /** True when pages of `origin` may call this server (WebSocket handshakes ask before upgrading). */
  allows(origin: string): boolean {
    return this.allowed(origin);
  }

  private originHeaders(origin: string): OutHeaders {
    const h: OutHeaders = {
      "access-control-allow-origin": this.options.origins === "*" && !this.options.credentials ? "*" : origin,
      vary: "origin",
    };
    if (this.options.credentials) h["access-control-allow-credentials"] = "true";
    return h;
  }

  /**
   * Applies CORS to an exchange. Returns undefined when the exchange was answered here
   * (preflight or refusal), otherwise the exchange to hand on (wrapped when headers are due).
   */
  apply(ex: Exchange): Exchange | undefined {
    const o = ex.headers.origin;
    const origin = Array.isArray(o) ? o[0] : o;
    const preflight = ex.method === "OPTIONS" && ex.headers["access-control-request-method"] !== undefined;
    if (origin === undefined) {
      if (preflight) {
        sendHttpError(ex, new RpcError(Code.InvalidArgument, "CORS preflight without Origin", { httpStatus: 400 }));
        return undefined;
      }
      return ex;
    }
    if (!this.allowed(origin)) {
      sendHttpError(ex, new RpcError(Code.PermissionDenied, `origin ${origin} is not allowed`, { httpStatus: 403 }));
      ex.discardBody();
      return undefined;
    }
    if (preflight) {
      const method = String(ex.headers["access-control-request-method"]).toUpperCase();
      const requested = String(ex.headers["access-control-request-headers"] ?? "")
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean);
      const refused = requested.filter((h) => !this.allowHeaderSet.has(h) && !h.startsWith("tri-"));
      if ((method !== "POST" && method !== "GET") || refused.length > 0) {
        sendHttpError(
          ex,
          new RpcError(
            Code.PermissionDenied,
            method !== "POST" && method !== "GET"
              ? `method ${method} is not allowed: use POST (or GET for idempotent methods)`
              : `headers not allowed: ${refused.join(", ")}`,
            { httpStatus: 403 },
          ),
        );
        return undefined;
      }
      const extraTri = requested.filter((h) => h.startsWith("tri-") && !this.allowHeaderSet.has(h));
      const headers: OutHeaders = {
        ...this.originHeaders(origin),
        "access-control-allow-methods": "GET, POST",
        "access-control-allow-headers": extraTri.length ? `${this.allowHeaders}, ${extraTri.join(", ")}` : this.allowHeaders,
        "access-control-max-age": String(this.options.maxAgeSeconds ?? 7200),
        vary: "origin, access-control-request-method, access-control-request-headers",
      };
      ex.respond(204, headers);
      return undefined;
    }
    return withHeaders(ex, { ...this.originHeaders(origin), "access-control-expose-headers": this.exposeHeaders });
  }
}
