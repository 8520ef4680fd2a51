// Owns `MCP_VERSIONS`, `checkedMcpOptions`, `McpEndpoint`, `sendMcpError`. The MCP revisions
// served, newest first: the streamable HTTP ones the official SDK speaks. Must not change: limits
// before reading, authorization before decoding (docs/security.md).
import type { AddressInfo } from "node:net";
import { parseJson } from "../codec/json.js";
import { Code } from "../protocol/code.js";
import { parseMediaType } from "../protocol/content-type.js";
import { clientCancelled, serverShuttingDown, tooManyHeaders } from "../protocol/errors.js";
import { firstHeader, H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { boundMessage, quote } from "../protocol/wire-text.js";
import { BodyCollector, type BodyTarget } from "../protocol-triple/request-body.js";
import type { Logger } from "../runtime/logger.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { RegisteredMethod } from "../runtime/router.js";
import type { ExchangeHead, ServerProtocol, ServerProtocolHandler } from "../runtime/server-protocol.js";
import type { ServiceDescriptor } from "../service/descriptors.js";
import type { AbortSink, Exchange, OutHeaders, Responder } from "../transport/server/exchange.js";
import { INVALID_PARAMS, listTools, type McpAnswer, McpToolCall, unknownTool } from "./mcp-call.js";
import { McpTools } from "./mcp-tools.js";

/** `createServer({ mcp })`: where the MCP endpoint is, what it says of itself, who may reach it. */
export interface McpOptions {
  /** The endpoint's path (streamable HTTP: POST). Default `/mcp`. */
  path?: string;
  /** `serverInfo.name` in `initialize`. Default `triple-rpc`. */
  name?: string;
  /** `serverInfo.version`. Default `1.0.0`. */
  version?: string;
  /** `instructions` in `initialize`: how the tools are meant to be used, for the model. Default none. */
  instructions?: string;
  /**
   * Browser origins (`https://app.example.com`) allowed to call the endpoint when `cors` is not
   * configured (with `cors`, its origins decide). A request with any other `Origin` is refused
   * (403). Default none: only callers that send no `Origin` (agents, not web pages).
   */
  allowedOrigins?: readonly string[];
  /**
   * Host names (without port) accepted in `Host` when the server listens on a loopback address,
   * besides `localhost`, `127.0.0.1`, `[::1]` and the bound address: the DNS-rebinding check.
   * Default none.
   */
  allowedHosts?: readonly string[];
  /** How long a tool call may run, ms; the handler's signal fires then and the result is an error. 0: no limit. Default 60 000. */
  timeoutMs?: number;
  /** The most requests one JSON-RPC batch may hold (batches exist in revision 2025-03-26 only). Default 16. */
  maxBatchSize?: number;
}

/** The MCP revisions served, newest first: the streamable HTTP ones the official SDK speaks. */
const MCP_VERSIONS: readonly string[] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/** The revision a request without `MCP-Protocol-Version` is taken to speak (the spec's rule). */
const ASSUMED_VERSION = "2025-03-26";

const KEYS: ReadonlySet<string> = new Set(["path", "name", "version", "instructions", "allowedOrigins", "allowedHosts", "timeoutMs", "maxBatchSize"]);
const MAX_TIMER_MS = 2 ** 31 - 1;

function fail(message: string): never {
  throw new TypeError(`createServer({ mcp }): ${message}`);
}

function checkStrings(name: string, v: unknown): void {
  if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== "string" || x === ""))) {
    fail(`${name} must be an array of non-empty strings, got ${JSON.stringify(v)}`);
  }
}

/** The options checked (a TypeError naming the option), with their defaults. */
function checkedMcpOptions(o: unknown): Required<Omit<McpOptions, "instructions">> & { instructions: string | undefined } {
  const opts = o === true ? {} : o;
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) fail(`expected true or an options object, got ${JSON.stringify(o)}`);
  const m = opts as McpOptions;
  for (const k of Object.keys(m)) if (!KEYS.has(k)) fail(`unknown option ${JSON.stringify(k)}; known: ${[...KEYS].join(", ")}`);
  for (const k of ["path", "name", "version", "instructions"] as const) {
    if (m[k] !== undefined && (typeof m[k] !== "string" || m[k] === "")) fail(`${k} must be a non-empty string, got ${JSON.stringify(m[k])}`);
  }
  if (m.path !== undefined && !m.path.startsWith("/")) fail(`path must start with "/", got ${JSON.stringify(m.path)}`);
  checkStrings("allowedOrigins", m.allowedOrigins);
  checkStrings("allowedHosts", m.allowedHosts);
  const t = m.timeoutMs;
  if (t !== undefined && !(typeof t === "number" && Number.isInteger(t) && t >= 0 && t <= MAX_TIMER_MS)) {
    fail(`timeoutMs must be a whole number of milliseconds from 0 (no limit) to ${MAX_TIMER_MS}, got ${JSON.stringify(t)}`);
  }
  const b = m.maxBatchSize;
  if (b !== undefined && !(typeof b === "number" && Number.isInteger(b) && b >= 1 && b <= 1000))
    fail(`maxBatchSize must be a whole number from 1 to 1000, got ${JSON.stringify(b)}`);
  return {
    path: m.path ?? "/mcp",
    name: m.name ?? "triple-rpc",
    version: m.version ?? "1.0.0",
    instructions: m.instructions,
    allowedOrigins: m.allowedOrigins ?? [],
    allowedHosts: m.allowedHosts ?? [],
    timeoutMs: t ?? 60_000,
    maxBatchSize: b ?? 16,
  };
}

/** JSON-RPC's error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
/** Our code for a request refused by the HTTP layer's rules (origin, host, version, shutdown). */
const REFUSED = -32000;

/** An HTTP-level refusal: its status, its JSON-RPC code, and the RpcError telemetry records. */
class Refusal {
  constructor(
    readonly status: number,
    readonly rpcCode: number,
    readonly error: RpcError,
    readonly headers: OutHeaders = {},
  ) {}
}

function refusal(status: number, rpcCode: number, code: Code, message: string, headers?: OutHeaders): Refusal {
  return new Refusal(status, rpcCode, new RpcError(code, message, { httpStatus: status }), headers);
}

/** True for a loopback address: 127.0.0.0/8, ::1, and IPv4-mapped 127.x. */
function isLoopback(address: string): boolean {
  return address === "::1" || address === "localhost" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

/** The host name of a `Host` / `:authority` value, lower-case, without port; brackets kept on IPv6. */
function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(0, h.indexOf("]") + 1);
  const colon = h.indexOf(":");
  return colon < 0 ? h : h.slice(0, colon);
}

type Message = Record<string, unknown>;

/** A JSON-RPC response's text. */
function responseText(id: unknown, a: McpAnswer): string {
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id ?? null)},`;
  if ("result" in a) return `${head}"result":${a.result}}`;
  if ("error" in a) return `${head}"error":${JSON.stringify(a.error)}}`;
  return `${head}"error":${JSON.stringify({ code: REFUSED, message: boundMessage(`unauthenticated: ${a.unauthenticated.message}`) })}}`;
}

/**
 * The MCP endpoint (streamable HTTP, stateless): JSON-RPC over POST at one path, answered with
 * one JSON body (no SSE stream, no session: every request carries its own credentials and is
 * authorized on its own). `initialize`, `ping`, `tools/list` and `tools/call`; notifications
 * and client responses are taken (202) and dropped. Answered in `dispatch`, after CORS and before
 * the RPC protocols.
 */
class McpEndpoint {
  readonly options: ReturnType<typeof checkedMcpOptions>;
  private readonly origins: ReadonlySet<string>;
  private readonly hosts: ReadonlySet<string>;

  constructor(
    options: unknown,
    readonly core: ServerCore,
    readonly tools: McpTools,
    /** True when `cors` is configured: it has judged `Origin` already. */
    private readonly corsOn: boolean,
    /** The address the server is bound to (or a mounted handler's local address). */
    private readonly bound: () => AddressInfo | undefined,
    readonly logger: Logger,
  ) {
    this.options = checkedMcpOptions(options);
    this.origins = new Set(this.options.allowedOrigins.map((o) => o.toLowerCase()));
    this.hosts = new Set(["localhost", "127.0.0.1", "[::1]", ...this.options.allowedHosts.map((h) => h.toLowerCase())]);
  }

  serves(path: string): boolean {
    return path === this.options.path;
  }

  /** Answers the request when it is for the endpoint; false otherwise. */
  handle(ex: Exchange): boolean {
    if (ex.path !== this.options.path) return false;
    const refused = this.check(ex);
    if (refused) {
      this.refuse(ex, refused);
      return true;
    }
    new McpRequest(this, ex, firstHeader(ex.headers, "mcp-protocol-version") ?? ASSUMED_VERSION);
    return true;
  }

  /** The HTTP rules, in order: host, origin, method, media types, revision, headers, shutdown. */
  private check(ex: Exchange): Refusal | undefined {
    const h = ex.headers;
    const host = firstHeader(h, "host") ?? firstHeader(h, ":authority");
    const bound = this.bound();
    if (host !== undefined && bound !== undefined && isLoopback(bound.address)) {
      const name = hostName(host);
      const own = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
      if (!this.hosts.has(name) && name !== own) {
        return refusal(
          403,
          REFUSED,
          Code.PermissionDenied,
          `Host ${quote(host)} is not allowed: the server listens on loopback, which a DNS-rebinding page reaches under its own name; add the name to mcp.allowedHosts if it is yours`,
        );
      }
    }
    const origin = firstHeader(h, "origin");
    if (origin !== undefined && !this.corsOn && !this.origins.has(origin.toLowerCase())) {
      return refusal(
        403,
        REFUSED,
        Code.PermissionDenied,
        `origin ${quote(origin)} is not allowed to call the MCP endpoint: list it in mcp.allowedOrigins (or configure cors)`,
      );
    }
    if (ex.method !== "POST") {
      return refusal(
        405,
        REFUSED,
        Code.Unimplemented,
        `HTTP method ${quote(ex.method)} is not supported: this MCP endpoint is stateless (no SSE stream, no session), send JSON-RPC with POST`,
        { allow: "POST" },
      );
    }
    return this.checkPost(ex);
  }

  private checkPost(ex: Exchange): Refusal | undefined {
    const h = ex.headers;
    const ct = parseMediaType(firstHeader(h, H.contentType));
    if (ct?.type !== "application/json") {
      return refusal(
        415,
        REFUSED,
        Code.InvalidArgument,
        `unsupported Content-Type ${quote(firstHeader(h, H.contentType) ?? "")}: send JSON-RPC as application/json`,
      );
    }
    const accept = firstHeader(h, "accept");
    if (accept !== undefined && !/application\/json|application\/\*|\*\/\*/i.test(accept)) {
      return refusal(406, REFUSED, Code.InvalidArgument, `Accept ${quote(accept)} does not take application/json, the only form this endpoint answers in`);
    }
    const enc = firstHeader(h, H.contentEncoding);
    if (enc !== undefined && enc.trim().toLowerCase() !== "identity") {
      return refusal(415, REFUSED, Code.Unimplemented, `Content-Encoding ${quote(enc)} is not supported by the MCP endpoint: send the body uncompressed`);
    }
    const v = firstHeader(h, "mcp-protocol-version");
    if (v !== undefined && !MCP_VERSIONS.includes(v)) {
      return refusal(400, INVALID_REQUEST, Code.InvalidArgument, `unsupported MCP-Protocol-Version ${quote(v)}: this server speaks ${MCP_VERSIONS.join(", ")}`);
    }
    const limits = this.core.limits;
    if (ex.headerCount > limits.maxHeaderCount) return new Refusal(431, REFUSED, tooManyHeaders(ex.headerCount, limits.maxHeaderCount));
    if (this.core.draining) return new Refusal(503, REFUSED, serverShuttingDown());
    return undefined;
  }

  /** Answers a refused request: its HTTP status, a JSON-RPC error body (id null); recorded as refused. */
  refuse(ex: Exchange, r: Refusal, record = true): void {
    if (record) this.core.refused(ex, "mcp", r.error);
    if (ex.headersSent || ex.aborted) return;
    ex.discardBody(r.status === 413);
    const body = responseText(null, { error: { code: r.rpcCode, message: boundMessage(r.error.message) } });
    ex.respond(r.status, { [H.contentType]: "application/json", ...r.headers }, body);
  }
}

/**
 * Ends an MCP request the server gives up on (shutdown cancelling the calls still running): its
 * HTTP status and a JSON-RPC error naming why; a request already answered is left alone.
 */
function sendMcpError(ex: Responder, err: RpcError): void {
  const e = ex as Partial<Exchange> & Responder;
  if (e.headersSent || e.aborted) return;
  e.discardBody?.();
  const body = responseText(null, { error: { code: REFUSED, message: boundMessage(err.message) } });
  ex.respond(err.httpStatus ?? 503, { [H.contentType]: "application/json" }, body);
}

/** One HTTP request to the endpoint: its body read and parsed, its message(s) answered. */
class McpRequest implements BodyTarget, AbortSink {
  private readonly calls = new Set<McpToolCall>();
  private gone = false;
  /** The body's size while it is one message (a batch's calls do not report one each). */
  private bodyBytes: number | undefined = undefined;

  constructor(
    private readonly endpoint: McpEndpoint,
    private readonly ex: Exchange,
    private readonly version: string,
  ) {
    ex.onAbort(this);
    new BodyCollector(ex, endpoint.core.limits.maxBodyBytes, this);
  }

  onExchangeAbort(): void {
    this.gone = true;
    for (const c of this.calls) c.abort(clientCancelled());
  }

  onBody(err: RpcError | undefined, raw: Buffer): void {
    if (this.gone) return;
    if (err) {
      this.endpoint.refuse(this.ex, new Refusal(err.httpStatus ?? 400, REFUSED, err));
      return;
    }
    let parsed: unknown;
    try {
      parsed = parseJson(raw.toString("utf8"));
    } catch (e) {
      this.endpoint.refuse(
        this.ex,
        new Refusal(400, PARSE_ERROR, new RpcError(Code.InvalidArgument, `parse error: ${(e as Error).message}`, { httpStatus: 400 })),
      );
      return;
    }
    if (!Array.isArray(parsed)) this.bodyBytes = raw.length;
    (Array.isArray(parsed) ? this.batch(parsed) : this.single(parsed)).catch((e) => this.crashed(e));
  }

  /** A bug on the way (never a caller's mistake): logged, answered 500, and the process carries on. */
  private crashed(e: unknown): void {
    const ex = this.ex;
    this.endpoint.logger.error({ err: e, path: ex.path, peer: `${ex.peer.address}:${ex.peer.port}` }, `internal error serving MCP: ${(e as Error)?.message}`);
    try {
      this.endpoint.refuse(ex, new Refusal(500, -32603, new RpcError(Code.Internal, "internal error", { httpStatus: 500 })));
    } catch {
      ex.reset();
    }
  }

  private async single(m: unknown): Promise<void> {
    const invalid = invalidMessage(m);
    if (invalid) {
      this.endpoint.refuse(this.ex, refusal(400, INVALID_REQUEST, Code.InvalidArgument, invalid));
      return;
    }
    const msg = m as Message;
    if (!isRequest(msg)) {
      this.finish(202, undefined);
      return;
    }
    const answer = await this.answer(msg);
    if (answer === undefined) return;
    if ("unauthenticated" in answer) this.unauthenticated(answer.unauthenticated, answer.recorded);
    else this.finish(200, responseText(msg.id, answer));
  }

  /** A batch (revision 2025-03-26 only): at most `maxBatchSize` messages, answered one after another. */
  private async batch(list: unknown[]): Promise<void> {
    const max = this.endpoint.options.maxBatchSize;
    let problem: string | undefined;
    if (this.version !== "2025-03-26")
      problem = `JSON-RPC batches are not part of MCP ${this.version} (revision 2025-06-18 removed them): send one message per request`;
    else if (list.length === 0) problem = "an empty JSON-RPC batch";
    else if (list.length > max) problem = `a JSON-RPC batch of ${list.length} messages is over this server's limit of ${max} (mcp.maxBatchSize)`;
    else problem = list.map(invalidMessage).find((x) => x !== undefined);
    if (problem) {
      this.endpoint.refuse(this.ex, refusal(400, INVALID_REQUEST, Code.InvalidArgument, problem));
      return;
    }
    const out: string[] = [];
    for (const m of list as Message[]) {
      if (!isRequest(m)) continue;
      const answer = await this.answer(m);
      if (answer === undefined) return;
      if ("unauthenticated" in answer) {
        this.unauthenticated(answer.unauthenticated, answer.recorded);
        return;
      }
      out.push(responseText(m.id, answer));
    }
    this.finish(out.length === 0 ? 202 : 200, out.length === 0 ? undefined : `[${out.join(",")}]`);
  }

  /** The answer to one request; undefined when the peer went away. */
  private answer(m: Message): Promise<McpAnswer | undefined> | McpAnswer {
    const params = (m.params ?? {}) as Message;
    switch (m.method) {
      case "initialize":
        return { result: this.initializeResult(params) };
      case "ping":
        return { result: "{}" };
      case "tools/list":
        return listTools(this.endpoint.tools, this.ex);
      case "tools/call":
        return this.callTool(params);
      default:
        return {
          error: {
            code: METHOD_NOT_FOUND,
            message: `method not found: ${quote(String(m.method))}; this server offers initialize, ping, tools/list and tools/call`,
          },
        };
    }
  }

  private initializeResult(params: Message): string {
    const o = this.endpoint.options;
    const asked = params.protocolVersion;
    const version = typeof asked === "string" && MCP_VERSIONS.includes(asked) ? asked : MCP_VERSIONS[0];
    const result: Record<string, unknown> = {
      protocolVersion: version,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: o.name, version: o.version },
    };
    if (o.instructions !== undefined) result.instructions = o.instructions;
    return JSON.stringify(result);
  }

  private async callTool(params: Message): Promise<McpAnswer | undefined> {
    const { name, arguments: args } = params;
    if (typeof name !== "string") return { error: { code: INVALID_PARAMS, message: "tools/call needs params.name, the tool's name (a string)" } };
    if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
      return { error: { code: INVALID_PARAMS, message: "tools/call's params.arguments must be an object of the tool's named arguments" } };
    }
    const tool = this.endpoint.tools.get(name);
    if (tool === undefined) return unknownTool(name);
    const timeout = this.endpoint.options.timeoutMs;
    const call = new McpToolCall(this.endpoint.core, this.ex, tool, (args ?? {}) as Message, timeout === 0 ? undefined : timeout, this.bodyBytes);
    this.calls.add(call);
    const answer = await call.answer;
    this.calls.delete(call);
    return answer;
  }

  /** A token the verifier refused: 401; recorded as refused unless a tracked call recorded it already. */
  private unauthenticated(err: RpcError, recorded = false): void {
    const r = new Refusal(401, REFUSED, err, { "www-authenticate": 'Bearer realm="triple-rpc"' });
    this.endpoint.refuse(this.ex, r, !recorded);
  }

  private finish(status: number, body: string | undefined): void {
    if (this.gone || this.ex.headersSent || this.ex.aborted) return;
    if (body === undefined) this.ex.respond(status, {});
    else this.ex.respond(status, { [H.contentType]: "application/json" }, body);
  }
}

/** Why a value is not a JSON-RPC 2.0 message; undefined when it is one. */
function invalidMessage(m: unknown): string | undefined {
  if (typeof m !== "object" || m === null || Array.isArray(m)) return "a JSON-RPC message must be an object";
  const msg = m as Message;
  if (msg.jsonrpc !== "2.0") return 'a JSON-RPC message needs "jsonrpc": "2.0"';
  const hasId = msg.id !== undefined;
  if (hasId && typeof msg.id !== "string" && typeof msg.id !== "number") return "a JSON-RPC id must be a string or a number";
  if (msg.method === undefined)
    return hasId && ("result" in msg || "error" in msg) ? undefined : "a JSON-RPC message needs a method (or, for a response, an id and a result or error)";
  if (typeof msg.method !== "string") return "a JSON-RPC method must be a string";
  if (msg.params !== undefined && (typeof msg.params !== "object" || msg.params === null || Array.isArray(msg.params))) return "MCP params must be an object";
  return undefined;
}

/** A request (method and id) rather than a notification or a response. */
function isRequest(m: Message): boolean {
  return typeof m.method === "string" && m.id !== undefined;
}

/** The MCP endpoint as a server protocol: it claims its path, ahead of every RPC protocol. */
class McpProtocolHandler implements ServerProtocolHandler {
  readonly name = "mcp";

  constructor(private readonly endpoint: McpEndpoint) {}

  claims(ex: ExchangeHead): boolean {
    return ex.path === this.endpoint.options.path;
  }

  handle(ex: Exchange): void {
    this.endpoint.handle(ex);
  }

  writeError(r: Responder, err: RpcError): void {
    sendMcpError(r, err);
  }

  cancel(_ctx: unknown, ex: Exchange, err: RpcError): void {
    sendMcpError(ex, err);
  }

  serves(path: string): boolean {
    return this.endpoint.serves(path);
  }

  add(entry: RegisteredMethod): void {
    this.endpoint.tools.add(entry);
  }

  remove(service: ServiceDescriptor): void {
    this.endpoint.tools.removeService(service);
  }
}

/** MCP (`createServer({ mcp })`): off unless the option is given. */
export const mcpServer: ServerProtocol = {
  name: "mcp",
  open: (core, settings) => {
    const mcp = settings.options.mcp;
    if (!mcp) return undefined;
    return new McpProtocolHandler(new McpEndpoint(mcp, core, new McpTools(), settings.corsOn, settings.address, settings.logger));
  },
};
