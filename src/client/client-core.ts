import type { OutgoingHttpHeaders } from "node:http";
import { Code } from "../protocol/code.js";
import {
  COMPRESS_MIN_BYTES,
  type Compression,
  GRPC_ACCEPT_ENCODING,
  GRPC_COMPRESSIONS,
  HTTP_ACCEPT_ENCODING,
  HTTP_COMPRESSIONS,
} from "../protocol/compression.js";
import { H, metadataOf, RESERVED_HEADERS, TRAILER_PREFIX, TRI_PROTOCOL_VERSION, trailersOf } from "../protocol/headers.js";
import { type MetadataInit, RpcError } from "../protocol/rpc-error.js";
import { GrpcClientCall, grpcHeaders, type ResponseMode } from "../protocol-grpc/client-call.js";
import type { GrpcMessageFormat } from "../protocol-grpc/content-type.js";
import { type MessageCodec, messageCodec } from "../protocol-grpc/message-codec.js";
import { formatGrpcTimeout } from "../protocol-grpc/timeout.js";
import { tripleReplyBody } from "../protocol-triple/client-reply.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { Http1Transport } from "../transport/client/http1.js";
import { Http2Transport } from "../transport/client/http2.js";
import type { HttpReply, UnaryTransport } from "../transport/client/unary-transport.js";
import type { CallOptions } from "./call-options.js";
import { CallScope, NEVER_ABORTS } from "./call-scope.js";

/** The scope of every call without a timeout or a caller's signal. */
const UNBOUNDED_SCOPE = new CallScope(undefined, undefined);
import type { Attempt, ClusterContext, ClusterPolicy, Invocation } from "./cluster/cluster.js";
import { type Directory, StaticDirectory } from "./cluster/directory.js";
import { clusterPolicy } from "./cluster/policies.js";
import { loadBalancer } from "./loadbalance/balancers.js";
import type { ClientContentType, ClientOptions } from "./options.js";
import type { Provider, ProviderInit } from "./provider.js";
import { USER_AGENT } from "./version.js";

/** A method prepared once per client: codec, protocol and the headers every call repeats. */
export interface PreparedMethod {
  readonly md: MethodDescriptor;
  readonly codec: MessageCodec;
  /** The Content-Type of its requests. */
  readonly contentType: string;
  /** gRPC (HTTP/2 framing and trailers) rather than Triple HTTP unary. */
  readonly grpc: boolean;
  /** Retries of this method: the client's per-method option, else `@Method({ retries })`, else the client's. */
  readonly retries: number;
  /** The complete gRPC request headers of a call that adds none of its own. */
  readonly grpcHeaders: OutgoingHttpHeaders;
  /** The complete Triple HTTP/2 request headers (pseudo-headers included) of such a call. */
  readonly h2Headers: OutgoingHttpHeaders;
  readonly headers: OutgoingHttpHeaders;
}

function isDirectory(x: unknown): x is Directory {
  return typeof x === "object" && x !== null && !Array.isArray(x) && typeof (x as Directory).list === "function";
}

function addMetadata(target: OutgoingHttpHeaders, md: MetadataInit | undefined): void {
  if (!md) return;
  for (const k of Object.keys(md)) {
    const name = k.toLowerCase();
    // Protocol headers are ours to set; letting metadata override them would corrupt the call.
    if (name.startsWith(":") || RESERVED_HEADERS.has(name)) continue;
    target[name] = md[k];
  }
}

function nonNegative(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!(v >= 0) || !Number.isFinite(v)) throw new TypeError(`createClient: ${name} must be a number >= 0, got ${v}`);
  return v;
}

/** The client's content type, checked against its protocol and HTTP version. */
function checkedContentType(o: ClientOptions): ClientContentType {
  if (o.protocol !== undefined && o.protocol !== "triple" && o.protocol !== "grpc") {
    throw new TypeError(`createClient: protocol must be "triple" or "grpc", got "${o.protocol}"`);
  }
  const ct = o.contentType ?? (o.protocol === "grpc" ? "grpc+proto" : "json");
  if (!["json", "proto", "grpc+proto", "grpc+json"].includes(ct)) {
    throw new TypeError(`createClient: contentType must be json, proto, grpc+proto or grpc+json, got "${ct}"`);
  }
  const grpc = ct.startsWith("grpc");
  if (o.protocol === "grpc" && !grpc) {
    throw new TypeError(`createClient: protocol grpc needs contentType grpc+proto or grpc+json, got "${ct}"`);
  }
  if (o.protocol === "triple" && grpc) {
    throw new TypeError(`createClient: contentType ${ct} is gRPC; use protocol "grpc" (or leave protocol out)`);
  }
  if (o.httpVersion !== undefined && o.httpVersion !== "1.1" && o.httpVersion !== "2") {
    throw new TypeError(`createClient: httpVersion must be "1.1" or "2", got "${o.httpVersion}"`);
  }
  if (grpc && o.httpVersion === "1.1") throw new TypeError("createClient: gRPC needs HTTP/2, not HTTP/1.1");
  return ct;
}

/** The request compression for Triple HTTP and for gRPC; identity is none. */
function checkedCompression(name: string | undefined, grpc: boolean): [Compression | undefined, Compression | undefined] {
  const comp = name ?? "identity";
  if (comp === "identity") return [undefined, undefined];
  const http = HTTP_COMPRESSIONS.get(comp);
  const forGrpc = GRPC_COMPRESSIONS.get(comp);
  if (!http) throw new TypeError(`createClient: unknown compression "${comp}"`);
  if (grpc && !forGrpc) throw new TypeError(`createClient: gRPC supports gzip and deflate compression, not "${comp}"`);
  return [http, forGrpc];
}

/** The directory of `providers` (a list, or a Directory the caller owns), refusing a missing or doubled source. */
function staticDirectory(o: ClientOptions): [Directory, boolean] {
  const p = o.providers as unknown;
  if (p !== undefined && o.registry !== undefined) {
    throw new TypeError("createClient: give either options.providers or options.registry, not both");
  }
  if (p === undefined || p === null || (typeof p !== "string" && !Array.isArray(p) && !isDirectory(p))) {
    throw new TypeError(
      `createClient: options.providers is ${p === undefined ? "missing" : `a ${typeof p}`}: give a list of URLs or ` +
        `host:port ("127.0.0.1:50051"), a comma-separated string, or a Directory; or options.registry ("zookeeper://127.0.0.1:2181")`,
    );
  }
  return isDirectory(p) ? [p, false] : [new StaticDirectory(p as string | readonly ProviderInit[]), true];
}

/**
 * A directory filled asynchronously: a call that finds no provider yet waits for the first list
 * (static directories never get this wrapper, so their calls pay nothing for it).
 */
function awaitingFirstList(policy: ClusterPolicy, directory: Directory): ClusterPolicy {
  const ready = directory.ready!.bind(directory);
  return {
    name: policy.name,
    invoke(inv, attempt, ctx) {
      if (directory.list(inv.method.serviceName).length > 0) return policy.invoke(inv, attempt, ctx);
      return ready().then(() => policy.invoke(inv, attempt, ctx));
    },
  };
}

/**
 * Everything behind one client proxy: the directory, the cluster policy and balancer, the
 * transports, and the four call shapes. Per-call work is the encode, the headers that vary
 * (timeout, per-call metadata, a token from a function) and the attempt itself.
 */
export class ClientCore {
  readonly directory: Directory;
  private readonly ownsDirectory: boolean;
  private readonly policy: ClusterPolicy;
  private readonly ctx: ClusterContext;
  private readonly contentType: ClientContentType;
  private readonly useGrpc: boolean;
  private readonly timeout: number | undefined;
  private readonly maxBytes: number;
  private readonly httpCompression: Compression | undefined;
  private readonly grpcCompression: Compression | undefined;
  private readonly tokenFn: (() => string | Promise<string>) | undefined;
  private readonly baseHeaders: OutgoingHttpHeaders = {};
  private readonly settings;
  private h1: Http1Transport | undefined;
  private h2: Http2Transport | undefined;

  /** `registryDirectory`: the directory createClient built from `options.registry` (owned by the client). */
  constructor(
    private readonly options: ClientOptions,
    registryDirectory?: Directory,
  ) {
    const o = options;
    if (typeof o !== "object" || o === null) throw new TypeError("createClient: options are required: { providers: [...] }");
    [this.directory, this.ownsDirectory] = registryDirectory ? [registryDirectory, true] : staticDirectory(o);
    this.contentType = checkedContentType(o);
    this.useGrpc = this.contentType.startsWith("grpc");
    this.timeout = o.timeout === undefined ? undefined : nonNegative("timeout", o.timeout, 0) || undefined;
    this.maxBytes = nonNegative("maxResponseBytes", o.maxResponseBytes, 4 * 1024 * 1024);
    [this.httpCompression, this.grpcCompression] = checkedCompression(o.compression, this.useGrpc);
    const policy = clusterPolicy(o.cluster);
    this.policy = this.directory.ready ? awaitingFirstList(policy, this.directory) : policy;
    this.ctx = {
      directory: this.directory,
      balancer: loadBalancer(o.loadBalance),
      retries: Math.floor(nonNegative("retries", o.retries, 2)),
      forks: Math.max(1, Math.floor(nonNegative("forks", o.forks, 2))),
      downBackoffMs: nonNegative("downBackoffMs", o.downBackoffMs, 1000),
      failbackIntervalMs: nonNegative("failbackIntervalMs", o.failbackIntervalMs, 5000),
    };
    this.settings = {
      connectTimeoutMs: nonNegative("connectTimeoutMs", o.connectTimeoutMs, 10_000) || 10_000,
      tls: o.tls,
      keepaliveMs: nonNegative("keepaliveMs", o.keepaliveMs, 30_000),
      keepaliveTimeoutMs: nonNegative("keepaliveTimeoutMs", o.keepaliveTimeoutMs, 10_000) || 10_000,
    };
    const h = this.baseHeaders;
    h[H.triProtocolVersion] = TRI_PROTOCOL_VERSION;
    h[H.userAgent] = USER_AGENT;
    if (o.token !== undefined) {
      if (typeof o.token === "function") this.tokenFn = o.token;
      else h[H.authorization] = `Bearer ${o.token}`;
    }
    addMetadata(h, o.metadata);
  }

  /** Prepares a method: its codec for this client's content type and its constant headers. */
  prepare(md: MethodDescriptor, version: string, group: string): PreparedMethod {
    // Streams exist only in gRPC; a Triple-HTTP client streams with the matching gRPC content type.
    const grpc = this.useGrpc || md.kind !== "unary";
    const kind: ClientContentType = grpc && !this.useGrpc ? (this.contentType === "proto" ? "grpc+proto" : "grpc+json") : this.contentType;
    const { format, contentType } = wireFormat(md, kind);
    const codec = messageCodec(md, format);
    const headers: OutgoingHttpHeaders = { ...this.baseHeaders, [H.contentType]: contentType };
    if (version) headers[H.triServiceVersion] = version;
    if (group) headers[H.triServiceGroup] = group;
    if (grpc) {
      headers[H.grpcAcceptEncoding] = GRPC_ACCEPT_ENCODING;
      if (this.grpcCompression) headers[H.grpcEncoding] = this.grpcCompression.name;
    } else {
      headers[H.acceptEncoding] = HTTP_ACCEPT_ENCODING;
    }
    const own = this.options.methods?.[md.name] ?? this.options.methods?.[md.propertyKey];
    const retries = Math.floor(nonNegative(`methods.${md.name}.retries`, own?.retries ?? md.retries, this.ctx.retries));
    const h2Headers = { ...headers, ":method": "POST", ":path": md.path };
    return { md, codec, contentType, grpc, headers, retries, grpcHeaders: grpcHeaders(md.path, headers), h2Headers };
  }

  private http1(): Http1Transport {
    this.h1 ??= new Http1Transport(this.settings);
    return this.h1;
  }

  private http2(): Http2Transport {
    this.h2 ??= new Http2Transport(this.settings);
    return this.h2;
  }

  private unaryTransport(): UnaryTransport {
    return this.options.httpVersion === "1.1" ? this.http1() : this.http2();
  }

  /** The headers of one call (before the per-attempt timeout). */
  /** The headers of one call (before the per-attempt timeout); a promise only when a token function must run. */
  private callHeaders(pm: PreparedMethod, opts: CallOptions | undefined): OutgoingHttpHeaders | Promise<OutgoingHttpHeaders> {
    if (!opts?.metadata && !this.tokenFn) return pm.headers;
    const h: OutgoingHttpHeaders = { ...pm.headers };
    addMetadata(h, opts?.metadata);
    const tokenFn = this.tokenFn;
    if (!tokenFn) return h;
    return Promise.resolve(tokenFn()).then((token) => {
      h[H.authorization] = `Bearer ${token}`;
      return h;
    });
  }

  private withTimeout(headers: OutgoingHttpHeaders, scope: CallScope, grpc: boolean): OutgoingHttpHeaders {
    const ms = scope.remaining();
    if (ms === undefined) return headers;
    return grpc ? { ...headers, [H.grpcTimeout]: formatGrpcTimeout(ms) } : { ...headers, [H.triServiceTimeout]: String(ms) };
  }

  private scope(opts: CallOptions | undefined): CallScope {
    const t = opts?.timeout ?? this.timeout;
    const timeout = t !== undefined && t > 0 ? t : undefined;
    // A call nothing can end early shares one scope: it holds no timer and no listener.
    if (timeout === undefined && !opts?.signal) return UNBOUNDED_SCOPE;
    return new CallScope(timeout, opts?.signal);
  }

  private invocation(pm: PreparedMethod, args: readonly unknown[], scope: CallScope, streaming: boolean): Invocation {
    return { method: pm.md, args, signal: scope.signal, committed: false, streaming, retries: pm.retries };
  }

  /** The request headers of one Triple HTTP call: prepared ones (with HTTP/2's pseudo-headers) unless this call adds any. */
  private tripleRequestHeaders(pm: PreparedMethod, headers: OutgoingHttpHeaders, scope: CallScope): OutgoingHttpHeaders {
    if (headers === pm.headers && scope.deadline === undefined) return this.options.httpVersion === "1.1" ? pm.headers : pm.h2Headers;
    return this.withTimeout(headers, scope, false);
  }

  /** The request headers of one gRPC call: the method's prepared ones unless this call adds any. */
  private grpcRequestHeaders(pm: PreparedMethod, headers: OutgoingHttpHeaders, scope: CallScope): OutgoingHttpHeaders {
    if (headers === pm.headers && scope.deadline === undefined) return pm.grpcHeaders;
    return grpcHeaders(pm.md.path, this.withTimeout(headers, scope, true));
  }

  private openGrpc(
    p: Provider,
    pm: PreparedMethod,
    headers: OutgoingHttpHeaders,
    scope: CallScope,
    opts: CallOptions | undefined,
    mode: ResponseMode,
  ): Promise<GrpcClientCall> {
    const h2 = this.http2();
    const requestHeaders = this.grpcRequestHeaders(pm, headers, scope);
    const settings = { codec: pm.codec, maxBytes: this.maxBytes, compression: this.grpcCompression, signal: scope.signal, options: opts };
    // A connected session takes the stream at once: no promise to wait for.
    const now = scope.signal === NEVER_ABORTS ? h2.openNow(p, requestHeaders) : undefined;
    if (now) return Promise.resolve(new GrpcClientCall(now, p, settings, mode));
    return h2.open(p, requestHeaders, scope.signal).then((stream) => new GrpcClientCall(stream, p, settings, mode));
  }

  /** A unary call: Triple HTTP unary or gRPC, through the cluster policy. */
  unary(pm: PreparedMethod, args: readonly unknown[], opts: CallOptions | undefined): Promise<unknown> {
    const scope = this.scope(opts);
    if (scope.signal !== NEVER_ABORTS || this.tokenFn || opts?.metadata) return this.scopedUnary(pm, args, opts, scope);
    // Nothing can end this call early and nothing needs awaiting or disposing: one promise chain.
    try {
      return this.policy.invoke(this.invocation(pm, args, scope, false), this.unaryAttempt(pm, args, pm.headers, scope, opts), this.ctx);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A unary call with a timeout, a caller's signal, per-call metadata or a token function. */
  private async scopedUnary(pm: PreparedMethod, args: readonly unknown[], opts: CallOptions | undefined, scope: CallScope): Promise<unknown> {
    try {
      scope.throwIfAborted();
      const pending = this.callHeaders(pm, opts);
      const headers = pending instanceof Promise ? await pending : pending;
      return await this.policy.invoke(this.invocation(pm, args, scope, false), this.unaryAttempt(pm, args, headers, scope, opts), this.ctx);
    } finally {
      scope.dispose();
    }
  }

  /** One attempt of a unary call: Triple HTTP unary or gRPC, its body encoded once for all attempts. */
  private unaryAttempt(
    pm: PreparedMethod,
    args: readonly unknown[],
    callHeaders: OutgoingHttpHeaders,
    scope: CallScope,
    opts: CallOptions | undefined,
  ): Attempt<unknown> {
    let body = pm.codec.encodeArgs(args);
    let headers = callHeaders;
    if (pm.grpc) {
      return (p) =>
        this.openGrpc(p, pm, headers, scope, opts, "single").then((call) => {
          call.sendArgs(body);
          return call.result();
        });
    }
    if (this.httpCompression && body.byteLength >= COMPRESS_MIN_BYTES) {
      body = this.httpCompression.compress(body);
      headers = { ...headers, [H.contentEncoding]: this.httpCompression.name };
    }
    const transport = this.unaryTransport();
    const path = pm.md.path;
    return (p) =>
      transport
        .post(p, { path, headers: this.tripleRequestHeaders(pm, headers, scope), body, signal: scope.signal, maxBytes: this.maxBytes })
        .then((reply) => this.tripleReply(pm, reply, opts));
  }

  private tripleReply(pm: PreparedMethod, reply: HttpReply, opts: CallOptions | undefined): unknown {
    const body = tripleReplyBody(reply, this.maxBytes, pm.contentType);
    opts?.onHeaders?.(metadataOf(reply.headers));
    // Unary trailers: `trailer-` headers (Connect, dubbo-js, us), or real HTTP/2 trailers.
    opts?.onTrailers?.({ ...trailersOf(reply.headers, TRAILER_PREFIX), ...trailersOf(reply.trailers) });
    return pm.codec.decodeResponse(body);
  }

  /**
   * A server-streaming call. The cluster may retry until the first response message arrives
   * (or the stream ends); after that, errors reach the caller as they are.
   */
  async *serverStream(pm: PreparedMethod, args: readonly unknown[], opts: CallOptions | undefined): AsyncGenerator<unknown> {
    const scope = this.scope(opts);
    let call: GrpcClientCall | undefined;
    try {
      scope.throwIfAborted();
      const body = pm.codec.encodeArgs(args);
      const pending = this.callHeaders(pm, opts);
      const headers = pending instanceof Promise ? await pending : pending;
      const inv = this.invocation(pm, args, scope, true);
      const started = await this.policy.invoke(
        inv,
        async (p) => {
          const c = await this.openGrpc(p, pm, headers, scope, opts, "stream");
          c.sendArgs(body);
          try {
            return { c, first: await c.responses!.next() };
          } catch (e) {
            c.cancel();
            throw e;
          }
        },
        this.ctx,
      );
      inv.committed = true;
      call = started.c;
      if (started.first.done) return;
      yield started.first.value;
      yield* call.responses!;
    } finally {
      call?.cancel();
      scope.dispose();
    }
  }

  /** Opens a request-streaming call: the cluster may retry only until the stream is open. */
  private async openStreaming(
    pm: PreparedMethod,
    input: unknown,
    scope: CallScope,
    opts: CallOptions | undefined,
    mode: ResponseMode,
  ): Promise<GrpcClientCall> {
    if (!isIterable(input)) {
      throw new RpcError(Code.InvalidArgument, `${pm.md.path} streams its requests: pass an AsyncIterable or an Iterable`);
    }
    const pending = this.callHeaders(pm, opts);
    const headers = pending instanceof Promise ? await pending : pending;
    const inv = this.invocation(pm, [], scope, true);
    const call = await this.policy.invoke(inv, (p) => this.openGrpc(p, pm, headers, scope, opts, mode), this.ctx);
    inv.committed = true;
    void pump(call, input);
    return call;
  }

  /** A client-streaming call: sends every message of `input`, resolves with the one response. */
  async clientStream(pm: PreparedMethod, input: unknown, opts: CallOptions | undefined): Promise<unknown> {
    const scope = this.scope(opts);
    let call: GrpcClientCall | undefined;
    try {
      scope.throwIfAborted();
      call = await this.openStreaming(pm, input, scope, opts, "single");
      return await call.result();
    } finally {
      call?.cancel();
      scope.dispose();
    }
  }

  /** A bidi call: sends `input` while yielding the responses as they come. */
  async *bidiStream(pm: PreparedMethod, input: unknown, opts: CallOptions | undefined): AsyncGenerator<unknown> {
    const scope = this.scope(opts);
    let call: GrpcClientCall | undefined;
    try {
      scope.throwIfAborted();
      call = await this.openStreaming(pm, input, scope, opts, "stream");
      yield* call.responses!;
    } finally {
      call?.cancel();
      scope.dispose();
    }
  }

  /** The providers with their health and load, for monitoring. */
  providers(service: string): readonly Provider[] {
    return this.directory.list(service);
  }

  /** Closes connections (calls in flight finish) and the directory if the client made it. */
  async close(): Promise<void> {
    this.h1?.close();
    this.h2?.close();
    if (this.ownsDirectory) await this.directory.close?.();
  }
}

/**
 * The message format and Content-Type of a client content type for one method. IDL methods use
 * their messages (ProtoJSON for the JSON types); IDL-less methods use JSON, wrapped in Dubbo's
 * TripleRequestWrapper under grpc+proto; `proto` on an IDL-less method falls back to JSON, the
 * only body such a method can take.
 */
function wireFormat(md: MethodDescriptor, kind: ClientContentType): { format: GrpcMessageFormat; contentType: string } {
  const idl = md.requestType !== undefined && md.responseType !== undefined;
  switch (kind) {
    case "json":
      return { format: "json", contentType: "application/json" };
    case "grpc+json":
      return { format: "json", contentType: "application/grpc+json" };
    case "proto":
      return idl ? { format: "proto", contentType: "application/proto" } : { format: "json", contentType: "application/json" };
    case "grpc+proto":
      return { format: "proto", contentType: "application/grpc+proto" };
  }
}

function isIterable(x: unknown): x is AsyncIterable<unknown> | Iterable<unknown> {
  return (
    typeof x === "object" &&
    x !== null &&
    (typeof (x as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function" ||
      typeof (x as Iterable<unknown>)[Symbol.iterator] === "function")
  );
}

/** Feeds a request stream into a call; a failing input cancels the call with its error. */
async function pump(call: GrpcClientCall, input: AsyncIterable<unknown> | Iterable<unknown>): Promise<void> {
  try {
    for await (const m of input) {
      if (!(await call.send(m))) return;
    }
    call.end();
  } catch (e) {
    call.cancel(RpcError.from(e));
  }
}

