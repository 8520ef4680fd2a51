// Owns `checkedOptions`. Checks a web client's options; every mistake is a TypeError naming the
// option and the fix. Must not change: no node: import and no server code: it runs in browsers (the
// bundle budget test checks).
import { H } from "../protocol/headers.js";
import type { WebClientOptions, WebProtocol, WebTokenSource } from "./options.js";
import type { FetchFn, WebStreamTransport } from "./transport.js";

/** The web client's options, checked, with their defaults. */
export interface CheckedOptions {
  readonly baseUrl: string;
  readonly protocol: WebProtocol;
  readonly contentType: "json" | "proto";
  readonly grpcWebText: boolean;
  readonly useGet: boolean;
  readonly timeout: number | undefined;
  readonly token: WebTokenSource | undefined;
  readonly retries: number;
  readonly maxBytes: number;
  readonly fetch: FetchFn;
  readonly credentials: "omit" | "same-origin" | "include" | undefined;
  readonly streams: WebStreamTransport | undefined;
  /** The headers every call sends: version, group, the client's metadata. */
  readonly headers: Readonly<Record<string, string>>;
}

const PROTOCOLS: readonly WebProtocol[] = ["triple", "connect", "grpc-web"];

function fail(what: string): never {
  throw new TypeError(`createClient (triple-rpc/web): ${what}`);
}

function oneOf<T extends string>(name: string, v: unknown, allowed: readonly T[], fallback: T): T {
  if (v === undefined) return fallback;
  if (!allowed.includes(v as T)) fail(`options.${name} must be ${allowed.map((a) => `"${a}"`).join(", ")}; got ${JSON.stringify(v)}`);
  return v as T;
}

function positive(name: string, v: unknown, fallback: number | undefined, zeroOk = false): number | undefined {
  if (v === undefined) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (!zeroOk && v === 0))
    fail(`options.${name} must be a ${zeroOk ? "non-negative" : "positive"} number; got ${String(v)}`);
  return v;
}

function baseUrlOf(v: unknown): string {
  if (typeof v !== "string") fail(`options.baseUrl is required: the server's URL, e.g. "https://api.example.com"`);
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return fail(`options.baseUrl must be an absolute http(s) URL; got ${JSON.stringify(v)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") fail(`options.baseUrl must be an http: or https: URL; got ${JSON.stringify(v)}`);
  return v.replace(/\/+$/, "");
}

function fetchOf(v: unknown): FetchFn {
  if (v !== undefined && typeof v !== "function") fail("options.fetch must be a fetch function");
  const f = (v as FetchFn | undefined) ?? (globalThis.fetch as FetchFn | undefined);
  if (!f) fail("there is no global fetch here: pass options.fetch");
  // A browser's fetch must be called with no `this` (or the window); never as a method of our object.
  return v === undefined ? (input, init) => globalThis.fetch(input, init) : f;
}

function headersOf(o: WebClientOptions): Record<string, string> {
  const h: Record<string, string> = {};
  if (o.metadata !== undefined) {
    if (typeof o.metadata !== "object" || o.metadata === null) fail("options.metadata must be an object of header names to strings");
    for (const [k, v] of Object.entries(o.metadata)) h[k.toLowerCase()] = typeof v === "string" ? v : v.join(", ");
  }
  // Only a set version or group is sent: an empty header would be one more name a foreign
  // server's CORS must allow (connect-es's list has neither), for nothing.
  if (o.version !== undefined && o.version !== "") h[H.triServiceVersion] = String(o.version);
  if (o.group !== undefined && o.group !== "") h[H.triServiceGroup] = String(o.group);
  return h;
}

/** Checks a web client's options; every mistake is a TypeError naming the option and the fix. */
export function checkedOptions(o: WebClientOptions): CheckedOptions {
  if (!o || typeof o !== "object") fail('options are required: { baseUrl: "https://…" }');
  const protocol = oneOf("protocol", o.protocol, PROTOCOLS, "triple");
  const contentType = oneOf("contentType", o.contentType, ["json", "proto"] as const, protocol === "grpc-web" ? "proto" : "json");
  const grpcWebText = oneOf("grpcWebFormat", o.grpcWebFormat, ["binary", "text"] as const, "binary") === "text";
  if (grpcWebText && (protocol !== "grpc-web" || contentType !== "proto")) fail('options.grpcWebFormat "text" is gRPC-Web\'s, with contentType "proto"');
  if (o.token !== undefined && typeof o.token !== "string" && typeof o.token !== "function") fail("options.token must be a string or a function returning one");
  if (o.streams !== undefined && typeof o.streams?.open !== "function") fail("options.streams must be a WebStreamTransport (an object with open())");
  if ((o as { timeout?: unknown }).timeout !== undefined) fail("options.timeout was renamed timeoutMs in 0.x; see CHANGELOG.md");
  if (o.interceptors !== undefined && !Array.isArray(o.interceptors)) fail("options.interceptors must be an array of interceptors");
  return {
    baseUrl: baseUrlOf(o.baseUrl),
    protocol,
    contentType,
    grpcWebText,
    useGet: o.useGet === true,
    timeout: positive("timeoutMs", o.timeoutMs, undefined),
    token: o.token,
    retries: Math.floor(positive("retries", o.retries, 2, true) ?? 2),
    maxBytes: positive("maxResponseBytes", o.maxResponseBytes, 4 * 1024 * 1024) ?? 4 * 1024 * 1024,
    fetch: fetchOf(o.fetch),
    credentials: oneOf("credentials", o.credentials, ["omit", "same-origin", "include"] as const, "same-origin"),
    streams: o.streams,
    headers: headersOf(o),
  };
}
