// Owns `createClient`. Creates a client of a service over `fetch`, from the same `@Service` class
// or contract the server registers: unary methods return Promises, server-streaming methods
// `AsyncIterable`s. Must not change: no node: import and no server code: it runs in browsers (the
// bundle budget test checks).
import type { Client } from "../client/create-client.js";
import { type ClientInterceptor, type ClientNext, clientCall, effectiveOptions, lazyStream } from "../client/interceptor.js";
import { splitArgs } from "../runtime/call-options.js";
import { describeContract, lowerFirst } from "../service/describe.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { WebCore, type WebMethod } from "./core.js";
import type { WebClientOptions } from "./options.js";
import { markMethod } from "./query.js";

type ServiceClass = abstract new (...args: never[]) => unknown;

/** The method's base call (no interceptors): `input` is the arguments, or one iterable for request streams. */
function baseCall(core: WebCore, pm: WebMethod): ClientNext {
  switch (pm.md.kind) {
    case "unary":
      return (call) => core.unary(pm, call.input, effectiveOptions(call));
    case "server_streaming":
      return async (call) => core.serverStream(pm, call.input, effectiveOptions(call));
    // Request streams' code (streams.ts) is loaded on their first call: a unary-only page does not carry it.
    case "client_streaming":
      return async (call) => (await import("./streams.js")).clientStream(core, pm, call.input[0] as Iterable<unknown>, effectiveOptions(call));
    case "bidi_streaming":
      return async (call) => (await import("./streams.js")).bidiStream(core, pm, call.input[0] as Iterable<unknown>, effectiveOptions(call));
  }
}

/** The proxy method: splits its options off the arguments, runs the interceptors, returns a Promise or an AsyncIterable. */
function bind(core: WebCore, pm: WebMethod, interceptors: readonly ClientInterceptor[]): (...args: unknown[]) => unknown {
  const kind = pm.md.kind;
  const n = kind === "unary" || kind === "server_streaming" ? pm.md.params.length : 1;
  const streamsBack = kind === "server_streaming" || kind === "bidi_streaming";
  const base = baseCall(core, pm);
  if (interceptors.length === 0) {
    if (kind === "unary") {
      return (...all) => {
        const [args, opts] = splitArgs(all, n);
        return core.unary(pm, args, opts);
      };
    }
    if (kind === "server_streaming") {
      return (...all) => {
        const [args, opts] = splitArgs(all, n);
        return core.serverStream(pm, args, opts);
      };
    }
  }
  const chain = interceptors.reduceRight<ClientNext>((next, icpt) => icpt(next), base);
  return (...all) => {
    const [args, opts] = splitArgs(all, n);
    const result = chain(clientCall(pm.md, args, opts));
    return streamsBack ? lazyStream(result) : result;
  };
}

function renamed(md: MethodDescriptor, serviceName: string): MethodDescriptor {
  return { ...md, serviceName, path: `/${serviceName}/${md.name}` };
}

/**
 * Creates a client of a service over `fetch`, from the same `@Service` class or contract the
 * server registers: unary methods return Promises, server-streaming methods `AsyncIterable`s;
 * client- and bidi-streaming methods go through `options.streams`. The last argument of a call
 * may be its options (timeout, metadata, signal, onHeaders, onTrailers), as on the Node client.
 */
export function createClient<S>(service: abstract new (...args: any[]) => S, options: WebClientOptions): Client<S> {
  if (typeof service !== "function") throw new TypeError("createClient (triple-rpc/web): pass an @Service class or contract");
  const desc = describeContract(service as ServiceClass);
  const core = new WebCore({ ...options, version: options?.version ?? desc.version, group: options?.group ?? desc.group });
  const serviceName = options.serviceName ?? desc.name;
  const client: Record<string, unknown> = {};
  for (const m of desc.methods) {
    const md = serviceName === m.serviceName ? m : renamed(m, serviceName);
    const fn = bind(core, core.prepare(md), options.interceptors ?? []);
    markMethod(fn, md);
    // Callable by the JavaScript name and by the wire name (Greet and greet alike).
    for (const key of new Set([md.propertyKey, md.name, lowerFirst(md.name)])) {
      if (!(key in client)) Object.defineProperty(client, key, { value: fn, enumerable: true });
    }
  }
  return client as Client<S>;
}
