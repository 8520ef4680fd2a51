// Owns `createClient`, `createClient`, `createClient`, `closeClient`, … Creates a client of a
// service: from the same `@Service` class the server registers (typed), or from a .proto service.
// Unary methods return Promises. Must not change: the client loads no server code.
import * as protobuf from "protobufjs";
import type { CallContext } from "../runtime/context.js";
import { describeProtoService, describeService, lowerFirst } from "../service/describe.js";
import type { MethodDescriptor, ServiceDescriptor } from "../service/descriptors.js";
import { loadProto, lookupService } from "../service/proto.js";
import { ClientCore, type PreparedMethod } from "./client-core.js";
import { checkedLogger } from "../runtime/logger.js";
import { type ClientInterceptor, type ClientNext, clientCall, effectiveOptions, lazyStream } from "./interceptor.js";
import { type CallOptions, splitArgs } from "../runtime/call-options.js";
import { CLIENT_REGISTRY_KEYS, type ClientOptions, type ClientRegistryOptions, checkedClientOptions, checkRegistryFlags } from "./options.js";
import { checkLevel, registryGroup } from "../registry/options.js";
import type { Provider } from "../transport/client/provider.js";
import { RegistryDirectory, registryDirectory } from "./cluster/registry-directory.js";
import type { RouteExplanation } from "../governance/router-chain.js";
import type { ServiceKey } from "../registry/url.js";
import { checkTlsPem } from "../transport/tls-pem.js";
import { checkedClock } from "../runtime/options-check.js";

type IsContext<P> = 0 extends 1 & P ? false : [P] extends [CallContext] ? true : false;

/** A method's parameters without its `@Ctx()` parameter. */
type StripContext<A extends readonly unknown[]> = A extends readonly []
  ? []
  : A extends readonly [infer H, ...infer R]
    ? IsContext<H> extends true
      ? StripContext<R>
      : [H, ...StripContext<R>]
    : A;

/** A request-stream parameter also takes a plain Iterable (an array of messages). */
type ClientParams<A extends readonly unknown[]> = {
  [I in keyof A]: A[I] extends AsyncIterable<infer X> ? AsyncIterable<X> | Iterable<X> : A[I];
};

/** What a client method returns: streams stay `AsyncIterable`, everything else is a Promise. */
export type ClientResult<R> = R extends AsyncIterable<infer X> ? AsyncIterable<X> : Promise<Awaited<R>>;

/** One client method: the service method's arguments plus optional per-call options. */
export type ClientMethod<F> = F extends (...args: infer A) => infer R ? (...args: [...ClientParams<StripContext<A>>, CallOptions?]) => ClientResult<R> : never;

/** The typed proxy of a service class: every method, callable remotely. */
export type Client<S> = {
  [K in keyof S as S[K] extends (...args: any[]) => any ? K : never]: ClientMethod<S[K]>;
};

/** The untyped proxy of a .proto service: methods by rpc name and by lower-camel name. */
export type ProtoClient = Record<string, (...args: any[]) => any>;

/** A service in a .proto: the file (or a loaded Root) and the service's full name. */
export interface ProtoServiceRef {
  readonly proto: string | protobuf.Root;
  readonly service: string;
}

type ServiceClass = abstract new (...args: never[]) => unknown;

const cores = new WeakMap<object, ClientCore>();

function describeSource(source: ServiceClass | protobuf.Service | ProtoServiceRef): ServiceDescriptor {
  if (source instanceof protobuf.Service) return describeProtoService(source);
  if (typeof source === "function") return describeService(source);
  if (typeof source === "object" && source !== null && "proto" in source && "service" in source) {
    const root = typeof source.proto === "string" ? loadProto(source.proto) : source.proto;
    return describeProtoService(lookupService(root, source.service));
  }
  throw new TypeError("createClient: pass an @Service class, a protobufjs Service, or { proto, service }");
}

function renamed(md: MethodDescriptor, serviceName: string): MethodDescriptor {
  return { ...md, serviceName, path: `/${serviceName}/${md.name}` };
}

function bind(core: ClientCore, pm: PreparedMethod, interceptors: readonly ClientInterceptor[]): (...args: unknown[]) => unknown {
  if (interceptors.length > 0) return bindIntercepted(core, pm, interceptors);
  const n = pm.md.params.length;
  switch (pm.md.kind) {
    case "unary":
      return (...all) => {
        const [args, opts] = splitArgs(all, n);
        return core.unary(pm, args, opts);
      };
    case "server_streaming":
      return (...all) => {
        const [args, opts] = splitArgs(all, n);
        return core.serverStream(pm, args, opts);
      };
    case "client_streaming":
      return (...all) => {
        const [args, opts] = splitArgs(all, 1);
        return core.clientStream(pm, args[0], opts);
      };
    case "bidi_streaming":
      return (...all) => {
        const [args, opts] = splitArgs(all, 1);
        return core.bidiStream(pm, args[0], opts);
      };
  }
}

/** The proxy method with an interceptor chain; built once per method, not per call. */
function bindIntercepted(core: ClientCore, pm: PreparedMethod, interceptors: readonly ClientInterceptor[]): (...args: unknown[]) => unknown {
  const kind = pm.md.kind;
  const base: ClientNext = async (call) => {
    const opts = effectiveOptions(call);
    switch (kind) {
      case "unary":
        return core.unary(pm, call.input, opts);
      case "server_streaming":
        return core.serverStream(pm, call.input, opts);
      case "client_streaming":
        return core.clientStream(pm, call.input[0], opts);
      case "bidi_streaming":
        return core.bidiStream(pm, call.input[0], opts);
    }
  };
  const chain = interceptors.reduceRight<ClientNext>((next, icpt) => icpt(next), base);
  const n = kind === "unary" || kind === "server_streaming" ? pm.md.params.length : 1;
  const streamsBack = kind === "server_streaming" || kind === "bidi_streaming";
  return (...all) => {
    const [args, opts] = splitArgs(all, n);
    const result = chain(clientCall(pm.md, args, opts));
    return streamsBack ? lazyStream(result) : result;
  };
}

/**
 * Creates a client of a service: from the same `@Service` class the server registers (typed),
 * or from a .proto service. Unary methods return Promises; server-streaming methods return an
 * `AsyncIterable`; client-streaming methods take one; bidi methods take and return one. The last
 * argument may be {@link CallOptions} (timeout, metadata, signal).
 */
export function createClient<S>(service: abstract new (...args: any[]) => S, options: ClientOptions): Client<S>;
export function createClient<C = ProtoClient>(service: protobuf.Service | ProtoServiceRef, options: ClientOptions): C;
export function createClient(service: ServiceClass | protobuf.Service | ProtoServiceRef, options: ClientOptions): unknown {
  if (!options || typeof options !== "object")
    throw new TypeError('createClient: options are required: { providers: [...] } or { registry: "zookeeper://host:port" }');
  checkedClientOptions(options);
  checkTlsPem(options.tls, "createClient");
  const desc = describeSource(service);
  const serviceName = options.serviceName ?? desc.name;
  const version = options.version ?? desc.version;
  const group = options.group ?? desc.group;
  const core = clientCore(options, desc.methods, { interface: serviceName, version, group });
  const client: Record<string, unknown> = {};
  for (const m of desc.methods) {
    const md = serviceName === m.serviceName ? m : renamed(m, serviceName);
    const fn = bind(core, core.prepare(md, version, group), options.interceptors ?? []);
    // Callable by the JavaScript name and by the wire name (Greet and greet alike).
    for (const key of new Set([md.propertyKey, md.name, lowerFirst(md.name)])) {
      if (!(key in client)) Object.defineProperty(client, key, { value: fn, enumerable: true });
    }
  }
  cores.set(client, core);
  return client;
}

function isPositive(n: unknown): n is number {
  return typeof n === "number" && Number.isFinite(n) && n > 0;
}

/** The client's core, with a registry directory when `options.registry` is given. */
function clientCore(options: ClientOptions, methods: readonly MethodDescriptor[], key: ServiceKey): ClientCore {
  if (options.registry === undefined) return new ClientCore(options);
  if (options.providers !== undefined) throw new TypeError("createClient: give either options.providers or options.registry, not both");
  const reg = registryGroup<ClientRegistryOptions>("createClient", options.registry, CLIENT_REGISTRY_KEYS);
  checkRegistryFlags(reg);
  const clock = checkedClock("createClient", options.clock);
  const directory = registryDirectory({
    registry: reg.address,
    key,
    methods,
    application: reg.application,
    emptyProtection: reg.emptyProtection,
    registerConsumer: reg.registerConsumer,
    discovery: checkLevel("createClient", reg.level),
    providedBy: reg.providedBy,
    configCenter: reg.configCenter,
    tag: typeof options.tag === "string" ? options.tag.trim() : undefined,
    forceTag: options.forceTag,
    secure: options.tls !== undefined,
    tls: options.tls,
    // As the client reads connectTimeoutMs (unset or 0: 10 s); a bad value fails in ClientCore below.
    firstListWaitMs: isPositive(options.connectTimeoutMs) ? options.connectTimeoutMs : 10_000,
    logger: checkedLogger(options.logger, "createClient", clock),
    clock,
  });
  try {
    return new ClientCore(options, directory);
  } catch (e) {
    void directory.close();
    throw e;
  }
}

function coreOf(client: object): ClientCore {
  const core = cores.get(client);
  if (!core) throw new TypeError("not a client made by createClient");
  return core;
}

/**
 * Closes a client's connections; calls in flight finish first. A client following a registry
 * stops watching it and removes its consumer node; the promise resolves once that is done.
 */
export function closeClient(client: object): Promise<void> {
  return coreOf(client).close();
}

/**
 * Which providers Dubbo's routing rules (from the config center) keep for a call, router by
 * router in Dubbo's order, and why: `explainRoute(client, "sayHello", ["ann"], { tag: "gray" })`.
 * `method` is the Java (lower-first) or wire name; `options` are the call's (tag, forceTag,
 * metadata as attachments). Nothing is sent. A client without a registry keeps every provider.
 */
export function explainRoute(client: object, method: string, args: readonly unknown[] = [], options?: CallOptions): RouteExplanation {
  const core = coreOf(client);
  const dir = core.directory;
  if (!(dir instanceof RegistryDirectory)) {
    const n = dir.list("").length;
    return { steps: [], kept: [], text: `${n} providers, given by the client (no registry): no governance rule applies` };
  }
  if (typeof method !== "string" || method === "") throw new TypeError("explainRoute: method must be the method's name");
  const md = { name: method, serviceName: "" } as MethodDescriptor;
  return dir.explain({ method: md, args, options, signal: NEVER_SIGNAL, committed: false, streaming: false, retries: 0 });
}

const NEVER_SIGNAL = new AbortController().signal;

/** A client's providers with their live state (calls in flight, health), for monitoring and tests. */
export function clientProviders(client: object, service = ""): readonly Provider[] {
  return coreOf(client).providers(service);
}
