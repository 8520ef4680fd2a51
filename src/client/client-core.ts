import type { OutgoingHttpHeaders } from "node:http";
import { Code } from "../protocol/code.js";
import { codeFromGrpcHttpStatus } from "../protocol/status-table.js";
import {
  COMPRESS_MIN_BYTES,
  type Compression,
  GRPC_ACCEPT_ENCODING,
  GRPC_COMPRESSIONS,
  HTTP_ACCEPT_ENCODING,
  HTTP_COMPRESSIONS,
} from "../protocol/compression.js";
import { callerCancelled } from "../protocol/errors.js";
import { H, metadataOf, RESERVED_HEADERS, TRAILER_PREFIX, TRI_PROTOCOL_VERSION, trailersOf } from "../protocol/headers.js";
import { type MetadataInit, RpcError } from "../protocol/rpc-error.js";
import { type EnvelopeProtocol, GrpcClientCall, grpcHeaders, type ResponseMode } from "../protocol-grpc/client-call.js";
import type { GrpcMessageFormat } from "../protocol-grpc/content-type.js";
import { type MessageCodec, messageCodec } from "../protocol-grpc/message-codec.js";
import { checkedSerialization, wrapperFormat } from "./serialization-option.js";
import { formatGrpcTimeout } from "../protocol-grpc/timeout.js";
import { tripleReplyBody } from "../protocol-triple/client-reply.js";
import { CH, CONNECT_ACCEPT_ENCODING } from "../protocol-connect/wire.js";
import { grpcWebReplyMessage } from "../protocol-grpc-web/client-reply.js";
import { requestFrame } from "../protocol-grpc/framing.js";
import { type ClientCallObserver, ClientTelemetry } from "../observability/client-observer.js";
import { checkedLogger } from "../runtime/logger.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { Http1Transport } from "../transport/client/http1.js";
import { Http2Transport } from "../transport/client/http2.js";
import type { HttpReply, UnaryTransport } from "../transport/client/unary-transport.js";
import type { CallOptions } from "../runtime/call-options.js";
import { CallScope, NEVER_ABORTS } from "../transport/client/call-scope.js";

import type { Attempt, ClusterContext, ClusterPolicy, Invocation } from "./cluster/cluster.js";
import { type Directory, StaticDirectory } from "./cluster/directory.js";
import { clusterPolicy } from "./cluster/policies.js";
import { outlierSettings } from "./cluster/outlier.js";
import { loadBalancer } from "./loadbalance/balancers.js";
import type { ClientContentType, ClientOptions, ClientProtocol } from "./options.js";
import type { Provider, ProviderInit } from "../transport/client/provider.js";
import { USER_AGENT } from "../protocol/version.js";

/** The scope of every call without a timeout or a caller's signal. */
const UNBOUNDED_SCOPE = new CallScope(undefined, undefined);

/** A stream's outcome while its caller may still stop reading it (which cancels the call). */
const STOPPED_READING: unique symbol = Symbol("stopped reading");

/** A method prepared once per client: codec, protocol and the headers every call repeats. */
export interface PreparedMethod {
  readonly md: MethodDescriptor;
  readonly codec: MessageCodec;
  /** The Content-Type of its requests. */
  readonly contentType: string;
  /** The protocol of this method's calls (a Triple client's streams are gRPC). */
  readonly wire: ClientProtocol;
  /** The protocol and message compression of its calls on an HTTP/2 stream (gRPC unary, and streams). */
  readonly envelope: EnvelopeProtocol;
  readonly messageCompression: Compression | undefined;
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

const PROTOCOLS: readonly ClientProtocol[] = ["triple", "grpc", "connect", "grpc-web"];

/** The spellings `httpVersion` accepts, and what each means. */
const HTTP_VERSIONS: ReadonlyMap<unknown, "1.1" | "2"> = new Map<unknown, "1.1" | "2">([
  ["1.1", "1.1"],
  [1.1, "1.1"],
  ["2", "2"],
  [2, "2"],
  ["2.0", "2"],
]);

/** The options with `httpVersion` in its string form (`2` and `1.1` may be given as numbers). */
function checkedHttpVersion(o: ClientOptions): ClientOptions {
  const v: unknown = o.httpVersion;
  if (v === undefined || v === "1.1" || v === "2") return o;
  const version = HTTP_VERSIONS.get(v);
  if (version === undefined) {
    const shown = typeof v === "string" ? JSON.stringify(v) : `${String(v)} (${typeof v})`;
    throw new TypeError(`createClient: httpVersion must be "2" or "1.1" (the numbers 2 and 1.1 work too), got ${shown}`);
  }
  return { ...o, httpVersion: version };
}

/** The client's protocol and content type, checked against each other and the HTTP version. */
function checkedWire(o: ClientOptions): { protocol: ClientProtocol; ct: ClientContentType } {
  if (o.serialization !== undefined) return checkedSerialization(o);
  if (o.protocol !== undefined && !PROTOCOLS.includes(o.protocol)) {
    throw new TypeError(`createClient: protocol must be "triple", "grpc", "connect" or "grpc-web", got "${o.protocol}"`);
  }
  if (o.protocol === "connect" || o.protocol === "grpc-web") {
    const ct = o.contentType ?? (o.protocol === "connect" ? "json" : "proto");
    if (ct !== "json" && ct !== "proto") throw new TypeError(`createClient: protocol ${o.protocol} takes contentType json or proto, got "${ct}"`);
    return { protocol: o.protocol, ct };
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
  if (grpc && o.httpVersion === "1.1") throw new TypeError("createClient: gRPC needs HTTP/2, not HTTP/1.1");
  return { protocol: grpc ? "grpc" : "triple", ct };
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
  private readonly protocol: ClientProtocol;
  private readonly timeout: number | undefined;
  private readonly maxBytes: number;
  private readonly httpCompression: Compression | undefined;
  private readonly grpcCompression: Compression | undefined;
  private readonly tokenFn: (() => string | Promise<string>) | undefined;
  private readonly baseHeaders: OutgoingHttpHeaders = {};
  private readonly settings;
  private readonly telemetry: ClientTelemetry;
  private h1: Http1Transport | undefined;
  private h2: Http2Transport | undefined;

  /** `registryDirectory`: the directory createClient built from `options.registry` (owned by the client). */
  constructor(
    private readonly options: ClientOptions,
    registryDirectory?: Directory,
  ) {
    if (typeof options !== "object" || options === null) throw new TypeError('createClient: options are required: { providers: [...] } or { registry: "zookeeper://host:port" }');
    const o = checkedHttpVersion(options);
    this.options = o;
    [this.directory, this.ownsDirectory] = registryDirectory ? [registryDirectory, true] : staticDirectory(o);
    ({ protocol: this.protocol, ct: this.contentType } = checkedWire(o));
    this.timeout = o.timeout === undefined ? undefined : nonNegative("timeout", o.timeout, 0) || undefined;
    this.maxBytes = nonNegative("maxResponseBytes", o.maxResponseBytes, 4 * 1024 * 1024);
    [this.httpCompression, this.grpcCompression] = checkedCompression(o.compression, this.protocol === "grpc" || this.protocol === "grpc-web");
    const policy = clusterPolicy(o.cluster);
    this.policy = this.directory.ready ? awaitingFirstList(policy, this.directory) : policy;
    this.telemetry = new ClientTelemetry(o.telemetry);
    this.ctx = {
      logger: checkedLogger(o.logger, "createClient"),
      directory: this.directory,
      balancer: loadBalancer(o.loadBalance),
      retries: Math.floor(nonNegative("retries", o.retries, 2)),
      forks: Math.max(1, Math.floor(nonNegative("forks", o.forks, 2))),
      downBackoffMs: nonNegative("downBackoffMs", o.downBackoffMs, 1000),
      failbackIntervalMs: nonNegative("failbackIntervalMs", o.failbackIntervalMs, 5000),
      outlier: outlierSettings(o.outlierDetection),
    };
    this.settings = {
      connectTimeoutMs: nonNegative("connectTimeoutMs", o.connectTimeoutMs, 10_000) || 10_000,
      tls: o.tls,
      keepaliveMs: nonNegative("keepaliveMs", o.keepaliveMs, 30_000),
      keepaliveTimeoutMs: nonNegative("keepaliveTimeoutMs", o.keepaliveTimeoutMs, 10_000) || 10_000,
    };
    const h = this.baseHeaders;
    // Connect servers tell dubbo-js's Triple variant from Connect by this header: send it only for Triple and gRPC.
    if (this.protocol === "triple" || this.protocol === "grpc") h[H.triProtocolVersion] = TRI_PROTOCOL_VERSION;
    h[H.userAgent] = USER_AGENT;
    if (o.token !== undefined) {
      if (typeof o.token === "function") this.tokenFn = o.token;
      else h[H.authorization] = `Bearer ${o.token}`;
    }
    addMetadata(h, o.metadata);
  }

  /** Prepares a method: its codec for this client's content type and its constant headers. */
  prepare(md: MethodDescriptor, version: string, group: string): PreparedMethod {
    const streaming = md.kind !== "unary";
    // Streams exist only in gRPC among Triple's forms; a Triple client streams as gRPC.
    const wire: ClientProtocol = this.protocol === "triple" && streaming ? "grpc" : this.protocol;
    const wf = wireFormat(md, wire, this.contentType, streaming);
    const { contentType } = wf;
    const format = wrapperFormat(md, this.options.serialization) ?? wf.format;
    const codec = messageCodec(md, format);
    const headers: OutgoingHttpHeaders = { ...this.baseHeaders, [H.contentType]: contentType };
    if (version) headers[H.triServiceVersion] = version;
    if (group) headers[H.triServiceGroup] = group;
    this.addProtocolHeaders(headers, wire, streaming);
    const own = this.options.methods?.[md.name] ?? this.options.methods?.[md.propertyKey];
    const retries = Math.floor(nonNegative(`methods.${md.name}.retries`, own?.retries ?? md.retries, this.ctx.retries));
    const h2Headers = { ...headers, ":method": "POST", ":path": md.path };
    // A Triple client's unary calls never open a stream: its streams (and gRPC clients) are gRPC.
    const envelope: EnvelopeProtocol = wire === "triple" ? "grpc" : wire;
    const messageCompression = envelope === "connect" ? this.httpCompression : this.grpcCompression;
    return { md, codec, contentType, wire, envelope, messageCompression, headers, retries, grpcHeaders: grpcHeaders(md.path, headers), h2Headers };
  }

  /** The compression and protocol headers every call of a method repeats. */
  private addProtocolHeaders(headers: OutgoingHttpHeaders, wire: ClientProtocol, streaming: boolean): void {
    switch (wire) {
      case "grpc":
      case "grpc-web":
        if (wire === "grpc-web") headers["x-grpc-web"] = "1";
        headers[H.grpcAcceptEncoding] = GRPC_ACCEPT_ENCODING;
        if (this.grpcCompression) headers[H.grpcEncoding] = this.grpcCompression.name;
        return;
      case "connect":
        headers[CH.protocolVersion] = "1";
        if (!streaming) break;
        headers[CH.acceptEncoding] = CONNECT_ACCEPT_ENCODING;
        if (this.httpCompression) headers[CH.contentEncoding] = this.httpCompression.name;
        return;
    }
    headers[H.acceptEncoding] = HTTP_ACCEPT_ENCODING;
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

  private withTimeout(headers: OutgoingHttpHeaders, scope: CallScope, wire: ClientProtocol): OutgoingHttpHeaders {
    const ms = scope.remaining();
    if (ms === undefined) return headers;
    switch (wire) {
      case "grpc":
      case "grpc-web":
        return { ...headers, [H.grpcTimeout]: formatGrpcTimeout(ms) };
      case "connect":
        return { ...headers, [CH.timeoutMs]: String(ms) };
      default:
        return { ...headers, [H.triServiceTimeout]: String(ms) };
    }
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
    return this.withTimeout(headers, scope, pm.wire);
  }

  /** The request headers of one gRPC call: the method's prepared ones unless this call adds any. */
  private grpcRequestHeaders(pm: PreparedMethod, headers: OutgoingHttpHeaders, scope: CallScope): OutgoingHttpHeaders {
    if (headers === pm.headers && scope.deadline === undefined) return pm.grpcHeaders;
    return grpcHeaders(pm.md.path, this.withTimeout(headers, scope, pm.wire));
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
    const settings = { codec: pm.codec, maxBytes: this.maxBytes, compression: pm.messageCompression, signal: scope.signal, options: opts, protocol: pm.envelope };
    // A connected session takes the stream at once: no promise to wait for.
    const now = scope.signal === NEVER_ABORTS ? h2.openNow(p, requestHeaders) : undefined;
    if (now) return Promise.resolve(new GrpcClientCall(now, p, settings, mode));
    return h2.open(p, requestHeaders, scope.signal).then((stream) => new GrpcClientCall(stream, p, settings, mode));
  }

  /** The headers of one call with the trace context of an observed call; a promise only when a token function must run. */
  private observedHeaders(
    pm: PreparedMethod,
    opts: CallOptions | undefined,
    obs: ClientCallObserver | undefined,
  ): OutgoingHttpHeaders | Promise<OutgoingHttpHeaders> {
    const pending = this.callHeaders(pm, opts);
    if (obs === undefined) return pending;
    return pending instanceof Promise ? pending.then((h) => obs.inject(h)) : obs.inject(pending);
  }

  /** A unary call: Triple HTTP unary or gRPC, through the cluster policy. */
  unary(pm: PreparedMethod, args: readonly unknown[], opts: CallOptions | undefined): Promise<unknown> {
    const scope = this.scope(opts);
    if (this.telemetry.on()) return this.scopedUnary(pm, args, opts, scope, this.telemetry.start(pm.md, pm.wire));
    if (scope.signal !== NEVER_ABORTS || this.tokenFn || opts?.metadata) return this.scopedUnary(pm, args, opts, scope, undefined);
    // Nothing can end this call early and nothing needs awaiting or disposing: one promise chain.
    try {
      return this.policy.invoke(this.invocation(pm, args, scope, false), this.unaryAttempt(pm, args, pm.headers, scope, opts), this.ctx);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A unary call with a timeout, a caller's signal, per-call metadata, a token function or telemetry. */
  private async scopedUnary(
    pm: PreparedMethod,
    args: readonly unknown[],
    opts: CallOptions | undefined,
    scope: CallScope,
    obs: ClientCallObserver | undefined,
  ): Promise<unknown> {
    try {
      scope.throwIfAborted();
      const pending = this.observedHeaders(pm, opts, obs);
      const headers = pending instanceof Promise ? await pending : pending;
      let attempt = this.unaryAttempt(pm, args, headers, scope, opts);
      if (obs) attempt = obs.attempts(attempt);
      const result = await this.policy.invoke(this.invocation(pm, args, scope, false), attempt, this.ctx);
      obs?.end(undefined);
      return result;
    } catch (e) {
      obs?.end(e);
      throw e;
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
    if (pm.wire === "grpc") {
      return (p) =>
        this.openGrpc(p, pm, headers, scope, opts, "single").then((call) => {
          call.sendArgs(body);
          return call.result();
        });
    }
    const transport = this.unaryTransport();
    const path = pm.md.path;
    if (pm.wire === "grpc-web") {
      const frame = requestFrame(body, pm.messageCompression);
      return (p) =>
        transport
          .post(p, { path, headers: this.tripleRequestHeaders(pm, headers, scope), body: frame, signal: scope.signal, maxBytes: this.maxBytes })
          .then((reply) => this.grpcWebReply(pm, reply, opts));
    }
    if (this.httpCompression && body.byteLength >= COMPRESS_MIN_BYTES) {
      body = this.httpCompression.compress(body);
      headers = { ...headers, [H.contentEncoding]: this.httpCompression.name };
    }
    return (p) =>
      transport
        .post(p, { path, headers: this.tripleRequestHeaders(pm, headers, scope), body, signal: scope.signal, maxBytes: this.maxBytes })
        .then((reply) => this.tripleReply(pm, reply, opts));
  }

  private grpcWebReply(pm: PreparedMethod, reply: HttpReply, opts: CallOptions | undefined): unknown {
    opts?.onHeaders?.(metadataOf(reply.headers));
    const { message, trailers } = grpcWebReplyMessage(reply, this.maxBytes);
    opts?.onTrailers?.(trailersOf(trailers));
    return pm.codec.decodeResponse(message);
  }

  private tripleReply(pm: PreparedMethod, reply: HttpReply, opts: CallOptions | undefined): unknown {
    // A Connect reply without a usable error body: Connect infers the code as gRPC does.
    const body = tripleReplyBody(reply, this.maxBytes, pm.contentType, pm.wire === "connect" ? codeFromGrpcHttpStatus : undefined);
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
    const obs = this.observe(pm);
    let call: GrpcClientCall | undefined;
    let outcome: unknown = STOPPED_READING;
    try {
      scope.throwIfAborted();
      const body = pm.codec.encodeArgs(args);
      const pending = this.observedHeaders(pm, opts, obs);
      const headers = pending instanceof Promise ? await pending : pending;
      const inv = this.invocation(pm, args, scope, true);
      const open: Attempt<{ c: GrpcClientCall; first: IteratorResult<unknown> }> = async (p) => {
        const c = await this.openGrpc(p, pm, headers, scope, opts, "stream");
        c.sendArgs(body);
        try {
          return { c, first: await c.responses!.next() };
        } catch (e) {
          c.cancel();
          throw e;
        }
      };
      const started = await this.policy.invoke(inv, obs ? obs.attempts(open) : open, this.ctx);
      inv.committed = true;
      call = started.c;
      if (!started.first.done) {
        yield started.first.value;
        yield* call.responses!;
      }
      outcome = undefined;
    } catch (e) {
      outcome = e;
      throw e;
    } finally {
      call?.cancel();
      scope.dispose();
      obs?.end(outcome === STOPPED_READING ? callerCancelled() : outcome);
    }
  }

  /** A call's observer when telemetry is on. */
  private observe(pm: PreparedMethod): ClientCallObserver | undefined {
    return this.telemetry.on() ? this.telemetry.start(pm.md, pm.wire) : undefined;
  }

  /** Opens a request-streaming call: the cluster may retry only until the stream is open. */
  private async openStreaming(
    pm: PreparedMethod,
    input: unknown,
    scope: CallScope,
    opts: CallOptions | undefined,
    mode: ResponseMode,
    obs: ClientCallObserver | undefined,
  ): Promise<GrpcClientCall> {
    if (!isIterable(input)) {
      throw new RpcError(Code.InvalidArgument, `${pm.md.path} streams its requests: pass an AsyncIterable or an Iterable`);
    }
    const pending = this.observedHeaders(pm, opts, obs);
    const headers = pending instanceof Promise ? await pending : pending;
    const inv = this.invocation(pm, [], scope, true);
    const open: Attempt<GrpcClientCall> = (p) => this.openGrpc(p, pm, headers, scope, opts, mode);
    const call = await this.policy.invoke(inv, obs ? obs.attempts(open) : open, this.ctx);
    inv.committed = true;
    void pump(call, input);
    return call;
  }

  /** A client-streaming call: sends every message of `input`, resolves with the one response. */
  async clientStream(pm: PreparedMethod, input: unknown, opts: CallOptions | undefined): Promise<unknown> {
    const scope = this.scope(opts);
    const obs = this.observe(pm);
    let call: GrpcClientCall | undefined;
    try {
      scope.throwIfAborted();
      call = await this.openStreaming(pm, input, scope, opts, "single", obs);
      const result = await call.result();
      obs?.end(undefined);
      return result;
    } catch (e) {
      obs?.end(e);
      throw e;
    } finally {
      call?.cancel();
      scope.dispose();
    }
  }

  /** A bidi call: sends `input` while yielding the responses as they come. */
  async *bidiStream(pm: PreparedMethod, input: unknown, opts: CallOptions | undefined): AsyncGenerator<unknown> {
    const scope = this.scope(opts);
    const obs = this.observe(pm);
    let call: GrpcClientCall | undefined;
    let outcome: unknown = STOPPED_READING;
    try {
      scope.throwIfAborted();
      call = await this.openStreaming(pm, input, scope, opts, "stream", obs);
      yield* call.responses!;
      outcome = undefined;
    } catch (e) {
      outcome = e;
      throw e;
    } finally {
      call?.cancel();
      scope.dispose();
      obs?.end(outcome === STOPPED_READING ? callerCancelled() : outcome);
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
 * The message format and Content-Type of one method's calls. Triple: IDL methods use their
 * messages (ProtoJSON for JSON), IDL-less ones JSON (`proto` falls back to JSON, the only body
 * such a method takes over Triple HTTP); gRPC: `+proto` carries the method's messages or the
 * derived schema's; Connect and gRPC-Web: the client's `json` or `proto`, in their own types.
 */
function wireFormat(md: MethodDescriptor, wire: ClientProtocol, ct: ClientContentType, streaming: boolean): { format: GrpcMessageFormat; contentType: string } {
  const idl = md.requestType !== undefined && md.responseType !== undefined;
  const json = ct === "json" || ct === "grpc+json";
  switch (wire) {
    case "connect":
      return { format: json ? "protojson" : "proto", contentType: `application/${streaming ? "connect+" : ""}${json ? "json" : "proto"}` };
    case "grpc-web":
      return { format: json ? "protojson" : "proto", contentType: `application/grpc-web+${json ? "json" : "proto"}` };
    case "grpc":
      return { format: json ? "json" : "proto", contentType: json ? "application/grpc+json" : "application/grpc+proto" };
    default:
      return json || !idl ? { format: "json", contentType: "application/json" } : { format: "proto", contentType: "application/proto" };
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

/**
 * Feeds a request stream into a call; a failing input cancels the call with its error. When the
 * call is over first (the server ended it, the caller stopped reading, it failed), the input is
 * closed (`return()`), also while it is waiting to produce its next message: a generator ends
 * at its next `yield`, running its `finally`.
 */
async function pump(call: GrpcClientCall, input: AsyncIterable<unknown> | Iterable<unknown>): Promise<void> {
  const asyncInput = typeof (input as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function";
  const it = asyncInput ? (input as AsyncIterable<unknown>)[Symbol.asyncIterator]() : (input as Iterable<unknown>)[Symbol.iterator]();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    Promise.resolve()
      .then(() => it.return?.())
      .catch(() => {});
  };
  call.onSettled(close);
  try {
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      // As for await does: a sync iterable's values may be promises.
      if (!(await call.send(asyncInput ? r.value : await r.value))) {
        close();
        return;
      }
    }
    closed = true;
    call.end();
  } catch (e) {
    closed = true;
    call.cancel(RpcError.from(e));
  }
}

