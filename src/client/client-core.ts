// Owns `ClientCore`. Everything behind one client proxy: the directory, the cluster policy and
// balancer, the transports, and the four call shapes. Must not change: the client loads no server
// code.
import type { OutgoingHttpHeaders } from "node:http";
import { Code } from "../protocol/code.js";
import { HTTP_COMPRESSIONS } from "../protocol/compression.js";
import { callerCancelled } from "../protocol/errors.js";
import { H, RESERVED_HEADERS } from "../protocol/headers.js";
import { type MetadataInit, RpcError } from "../protocol/rpc-error.js";
import { USER_AGENT } from "../protocol/version.js";
import type { CallOptions } from "../runtime/call-options.js";
import { type CallTag, callTag, FORCE_TAG_KEY, TAG_KEY } from "../runtime/call-tag.js";
import type { ProtocolClient, ProtocolSession, ResponseMode, StreamCall, WireMethod, WireOptions } from "../runtime/client-protocol.js";
import { checkedLogger } from "../runtime/logger.js";
import { bytes, checked, checkedClock, checkGroup, count, ms, oneOf, type Rule } from "../runtime/options-check.js";
import type { Clock } from "../transport/clock.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { CallScope, NEVER_ABORTS } from "../transport/client/call-scope.js";
import { Http1Transport } from "../transport/client/http1.js";
import { Http2Transport } from "../transport/client/http2.js";
import type { Provider, ProviderInit } from "../transport/client/provider.js";
import type { UnaryTransport } from "../transport/client/unary-transport.js";
import { type ClientCallObserver, ClientTelemetry } from "../observability/client-observer.js";
import type { Attempt, ClusterContext, ClusterPolicy, Invocation } from "./cluster/cluster.js";
import { type Directory, StaticDirectory } from "./cluster/directory.js";
import { outlierSettings } from "./cluster/outlier.js";
import { clusterPolicy } from "./cluster/policies.js";
import { TunedBalancers, tunedAttempt, tunedRetries } from "./cluster/tuning.js";
import { loadBalancer } from "./loadbalance/balancers.js";
import { type ClientOptions, checkedClientOptions, renamedCallTimeout } from "./options.js";
import { PROTOCOLS } from "./protocols.js";

/** The scope of every call without a timeout or a caller's signal. */
const UNBOUNDED_SCOPE = new CallScope(undefined, undefined);

/** A stream's outcome while its caller may still stop reading it (which cancels the call). */
const STOPPED_READING: unique symbol = Symbol("stopped reading");

/** A method prepared once per client: its protocol's side of it, and its retries. */
export interface PreparedMethod {
  readonly md: MethodDescriptor;
  /** Codec, framing, headers and the call shapes of the client's protocol. */
  readonly wire: WireMethod;
  /** Retries of this method: the client's per-method option, else `@Method({ retries })`, else the client's. */
  readonly retries: number;
  /** The method's own retries (per-method option, `@Method`), when it has any: a configurator's `retries` does not override them. */
  readonly methodRetries?: number;
  /** Timeout of this method's calls, ms: the client's per-method `timeoutMs`, else the client's; undefined for none. */
  readonly timeoutMs: number | undefined;
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

/** A client option by its rule, defaulted; a bad value is a TypeError naming it. */
function opt(name: string, v: number | undefined, rule: Rule, fallback: number): number {
  return checked("createClient", name, v, rule, fallback);
}

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

/**
 * The client's protocol (its `protocol` option, else the first that claims its `contentType`)
 * and the content type its calls use, as the protocol checked them.
 */
function checkedWire(o: ClientOptions): { protocol: ProtocolClient; contentType: string } {
  const wire: WireOptions = {
    protocol: o.protocol,
    contentType: o.contentType,
    httpVersion: o.httpVersion as WireOptions["httpVersion"],
    compression: o.compression,
    serialization: o.serialization,
  };
  const wanted = o.protocol;
  if (wanted !== undefined) {
    const protocol = PROTOCOLS.find((p) => p.name === wanted);
    if (!protocol) throw new TypeError(`createClient: protocol must be one of ${PROTOCOLS.map((p) => `"${p.name}"`).join(", ")}; got "${wanted}"`);
    return { protocol, contentType: protocol.contentType(wire) };
  }
  const protocol = PROTOCOLS.find((p) => p.claims(wire)) ?? PROTOCOLS[0];
  return { protocol, contentType: protocol.contentType(wire) };
}

/** The `compression` option: a known name, or undefined for identity (each protocol checks it can use it). */
/** `websocket.endOfRequest`, checked: `"message"` when left out. */
function websocketEnd(g: ClientOptions["websocket"]): "message" | "close" {
  const ws = checkGroup("createClient", "websocket", g, ["endOfRequest"]);
  return checked("createClient", "websocket.endOfRequest", ws?.endOfRequest, oneOf(["message", "close"]), "message");
}

function checkedCompression(name: string | undefined): string | undefined {
  if (name === undefined || name === "identity") return undefined;
  if (!HTTP_COMPRESSIONS.has(name)) throw new TypeError(`createClient: unknown compression "${name}": use gzip, deflate, br or identity`);
  return name;
}

/** The directory of `providers` (a list, or a Directory the caller owns), refusing a missing or doubled source. */
function staticDirectory(o: ClientOptions, clock: Clock): [Directory, boolean] {
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
  return isDirectory(p) ? [p, false] : [new StaticDirectory(p as string | readonly ProviderInit[], clock), true];
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
  private readonly timeoutMs: number | undefined;
  private readonly tokenFn: (() => string | Promise<string>) | undefined;
  private readonly baseHeaders: OutgoingHttpHeaders = {};
  private readonly settings;
  private readonly telemetry: ClientTelemetry;
  /** The client's protocol, set up for it. */
  private readonly session: ProtocolSession;
  private h1: Http1Transport | undefined;
  private h2: Http2Transport | undefined;

  /** `registryDirectory`: the directory createClient built from `options.registry` (owned by the client). */
  constructor(
    private readonly options: ClientOptions,
    registryDirectory?: Directory,
  ) {
    if (typeof options !== "object" || options === null)
      throw new TypeError('createClient: options are required: { providers: [...] } or { registry: "zookeeper://host:port" }');
    const o = checkedHttpVersion(checkedClientOptions(options));
    this.options = o;
    const clock = checkedClock("createClient", o.clock);
    [this.directory, this.ownsDirectory] = registryDirectory ? [registryDirectory, true] : staticDirectory(o, clock);
    const { protocol, contentType } = checkedWire(o);
    this.timeoutMs = opt("timeoutMs", o.timeoutMs, ms("0 means none"), 0) || undefined;
    const maxBytes = opt("maxResponseBytes", o.maxResponseBytes, bytes, 4 * 1024 * 1024);
    const policy = clusterPolicy(o.cluster);
    this.policy = this.directory.ready ? awaitingFirstList(policy, this.directory) : policy;
    this.telemetry = new ClientTelemetry(o.telemetry);
    this.ctx = {
      logger: checkedLogger(o.logger, "createClient", clock),
      directory: this.directory,
      balancer: loadBalancer(o.loadBalance),
      retries: opt("retries", o.retries, count(), 2),
      forks: Math.max(1, opt("forks", o.forks, count(), 2)),
      downBackoffMs: opt("downBackoffMs", o.downBackoffMs, ms(), 1000),
      failbackIntervalMs: opt("failbackIntervalMs", o.failbackIntervalMs, ms(), 5000),
      outlier: outlierSettings(o.outlierDetection),
      // A registry's providers and configurators may name a balancer (Dubbo's `loadbalance`).
      tuned: registryDirectory ? new TunedBalancers(o.loadBalance !== undefined) : undefined,
    };
    this.settings = {
      connectTimeoutMs: opt("connectTimeoutMs", o.connectTimeoutMs, ms("0 means the default"), 10_000) || 10_000,
      tls: o.tls,
      keepaliveMs: opt("keepaliveMs", o.keepaliveMs, ms(), 30_000),
      keepaliveTimeoutMs: opt("keepaliveTimeoutMs", o.keepaliveTimeoutMs, ms("0 means the default"), 10_000) || 10_000,
    };
    this.session = protocol.open({
      protocol: o.protocol,
      contentType,
      httpVersion: o.httpVersion as WireOptions["httpVersion"],
      compression: checkedCompression(o.compression),
      serialization: o.serialization,
      maxBytes,
      unary: () => this.unaryTransport(),
      http2: () => this.http2(),
      tls: o.tls,
      websocketEnd: websocketEnd(o.websocket),
    });
    const h = this.baseHeaders;
    h[H.userAgent] = USER_AGENT;
    if (o.token !== undefined) {
      if (typeof o.token === "function") this.tokenFn = o.token;
      else h[H.authorization] = `Bearer ${o.token}`;
    }
    addMetadata(h, o.metadata);
    const tag = checkedTag(o);
    if (tag) addTag(h, tag);
  }

  /** Prepares a method: its protocol's codec, framing and constant headers, and its retries. */
  prepare(md: MethodDescriptor, version: string, group: string): PreparedMethod {
    const headers: OutgoingHttpHeaders = { ...this.baseHeaders };
    if (version) headers[H.triServiceVersion] = version;
    if (group) headers[H.triServiceGroup] = group;
    const own = this.options.methods?.[md.name] ?? this.options.methods?.[md.propertyKey];
    const retries = opt(`methods.${md.name}.retries`, own?.retries ?? md.retries, count(), this.ctx.retries);
    const methodRetries = (own?.retries ?? md.retries) === undefined ? undefined : retries;
    const timeoutMs = own?.timeoutMs === undefined ? this.timeoutMs : opt(`methods.${md.name}.timeoutMs`, own.timeoutMs, ms("0 means none"), 0) || undefined;
    return { md, wire: this.session.prepare(md, headers), retries, methodRetries, timeoutMs };
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
    const tag = callTag(opts);
    if (!opts?.metadata && !this.tokenFn && tag === undefined) return pm.wire.headers;
    const h: OutgoingHttpHeaders = { ...pm.wire.headers };
    addMetadata(h, opts?.metadata);
    if (tag !== undefined) addTag(h, tag);
    const tokenFn = this.tokenFn;
    if (!tokenFn) return h;
    return Promise.resolve(tokenFn()).then((token) => {
      h[H.authorization] = `Bearer ${token}`;
      return h;
    });
  }

  /** The call's scope; `untimed` when each attempt is timed per provider instead (configurators' timeouts). */
  private scope(pm: PreparedMethod, opts: CallOptions | undefined, untimed = false): CallScope {
    if (opts !== undefined && (opts as { timeout?: unknown }).timeout !== undefined) throw renamedCallTimeout();
    const t = untimed ? undefined : (opts?.timeoutMs ?? pm.timeoutMs);
    const timeout = t !== undefined && t > 0 ? t : undefined;
    // A call nothing can end early shares one scope: it holds no timer and no listener.
    if (timeout === undefined && !opts?.signal) return UNBOUNDED_SCOPE;
    return new CallScope(timeout, opts?.signal);
  }

  private invocation(pm: PreparedMethod, args: readonly unknown[], scope: CallScope, streaming: boolean, opts: CallOptions | undefined): Invocation {
    const over = this.directory.tuning?.consumer;
    const retries = over ? tunedRetries(pm.md, over, pm.methodRetries, this.ctx.retries) : pm.retries;
    return { method: pm.md, args, signal: scope.signal, committed: false, streaming, retries, options: opts };
  }

  /** Opens a stream on a provider in the client's protocol. */
  private openStream(
    p: Provider,
    pm: PreparedMethod,
    headers: OutgoingHttpHeaders,
    scope: CallScope,
    opts: CallOptions | undefined,
    mode: ResponseMode,
  ): Promise<StreamCall> {
    return pm.wire.open(p, headers, scope, opts, mode);
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

  /** A unary call, through the cluster policy. */
  unary(pm: PreparedMethod, args: readonly unknown[], opts: CallOptions | undefined): Promise<unknown> {
    // Providers with timeouts of their own (their URL, a configurator): each attempt is timed per provider.
    const tuned = opts?.timeoutMs === undefined && this.directory.tuning?.timeouts === true;
    let scope: CallScope;
    try {
      scope = this.scope(pm, opts, tuned);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.telemetry.on()) return this.scopedUnary(pm, args, opts, scope, this.telemetry.start(pm.md, pm.wire.protocol), tuned);
    if (tuned || scope.signal !== NEVER_ABORTS || this.tokenFn || opts?.metadata || callTag(opts) !== undefined)
      return this.scopedUnary(pm, args, opts, scope, undefined, tuned);
    // Nothing can end this call early and nothing needs awaiting or disposing: one promise chain.
    try {
      return this.policy.invoke(this.invocation(pm, args, scope, false, opts), pm.wire.unary(args, pm.wire.headers, scope, opts), this.ctx);
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
    tuned = false,
  ): Promise<unknown> {
    try {
      scope.throwIfAborted();
      const pending = this.observedHeaders(pm, opts, obs);
      const headers = pending instanceof Promise ? await pending : pending;
      let attempt = tuned ? tunedAttempt((s) => pm.wire.unary(args, headers, s, opts), scope, pm.md, pm.timeoutMs) : pm.wire.unary(args, headers, scope, opts);
      if (obs) attempt = obs.attempts(attempt);
      const result = await this.policy.invoke(this.invocation(pm, args, scope, false, opts), attempt, this.ctx);
      obs?.end(undefined);
      return result;
    } catch (e) {
      obs?.end(e);
      throw e;
    } finally {
      scope.dispose();
    }
  }

  /**
   * A server-streaming call. The cluster may retry until the first response message arrives
   * (or the stream ends); after that, errors reach the caller as they are.
   */
  async *serverStream(pm: PreparedMethod, args: readonly unknown[], opts: CallOptions | undefined): AsyncGenerator<unknown> {
    const scope = this.scope(pm, opts);
    const obs = this.observe(pm);
    let call: StreamCall | undefined;
    let outcome: unknown = STOPPED_READING;
    try {
      scope.throwIfAborted();
      const body = pm.wire.encodeArgs(args);
      const pending = this.observedHeaders(pm, opts, obs);
      const headers = pending instanceof Promise ? await pending : pending;
      const inv = this.invocation(pm, args, scope, true, opts);
      const open: Attempt<{ c: StreamCall; first: IteratorResult<unknown> }> = async (p) => {
        const c = await this.openStream(p, pm, headers, scope, opts, "stream");
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
    return this.telemetry.on() ? this.telemetry.start(pm.md, pm.wire.protocol) : undefined;
  }

  /** Opens a request-streaming call: the cluster may retry only until the stream is open. */
  private async openStreaming(
    pm: PreparedMethod,
    input: unknown,
    scope: CallScope,
    opts: CallOptions | undefined,
    mode: ResponseMode,
    obs: ClientCallObserver | undefined,
  ): Promise<StreamCall> {
    if (!isIterable(input)) {
      throw new RpcError(Code.InvalidArgument, `${pm.md.path} streams its requests: pass an AsyncIterable or an Iterable`);
    }
    const pending = this.observedHeaders(pm, opts, obs);
    const headers = pending instanceof Promise ? await pending : pending;
    const inv = this.invocation(pm, [], scope, true, opts);
    const open: Attempt<StreamCall> = (p) => this.openStream(p, pm, headers, scope, opts, mode);
    const call = await this.policy.invoke(inv, obs ? obs.attempts(open) : open, this.ctx);
    inv.committed = true;
    void pump(call, input);
    return call;
  }

  /** A client-streaming call: sends every message of `input`, resolves with the one response. */
  async clientStream(pm: PreparedMethod, input: unknown, opts: CallOptions | undefined): Promise<unknown> {
    const scope = this.scope(pm, opts);
    const obs = this.observe(pm);
    let call: StreamCall | undefined;
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
    const scope = this.scope(pm, opts);
    const obs = this.observe(pm);
    let call: StreamCall | undefined;
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

/** The client's `tag` and `forceTag` options, checked. */
function checkedTag(o: ClientOptions): CallTag | undefined {
  if (o.tag !== undefined && (typeof o.tag !== "string" || o.tag.trim() === "" || /[\r\n]/.test(o.tag))) {
    throw new TypeError(`createClient: tag must be a non-empty string (Dubbo's dubbo.tag, e.g. "gray"), got ${JSON.stringify(o.tag)}`);
  }
  if (o.forceTag !== undefined && typeof o.forceTag !== "boolean")
    throw new TypeError(`createClient: forceTag must be true or false, got ${JSON.stringify(o.forceTag)}`);
  if (o.tag === undefined) {
    if (o.forceTag !== undefined) throw new TypeError("createClient: forceTag needs a tag");
    return undefined;
  }
  return o.forceTag === undefined ? { tag: o.tag.trim() } : { tag: o.tag.trim(), force: o.forceTag };
}

/** Writes a tag as Dubbo's attachments (`dubbo.tag`, `dubbo.force.tag`): headers on every protocol. */
function addTag(h: OutgoingHttpHeaders, tag: CallTag): void {
  h[TAG_KEY] = tag.tag;
  if (tag.force !== undefined) h[FORCE_TAG_KEY] = String(tag.force);
}

function isIterable(x: unknown): x is AsyncIterable<unknown> | Iterable<unknown> {
  return (
    typeof x === "object" &&
    x !== null &&
    (typeof (x as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function" || typeof (x as Iterable<unknown>)[Symbol.iterator] === "function")
  );
}

/**
 * Feeds a request stream into a call; a failing input cancels the call with its error. When the
 * call is over first (the server ended it, the caller stopped reading, it failed), the input is
 * closed (`return()`), also while it is waiting to produce its next message: a generator ends
 * at its next `yield`, running its `finally`.
 */
async function pump(call: StreamCall, input: AsyncIterable<unknown> | Iterable<unknown>): Promise<void> {
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
