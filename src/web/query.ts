// Owns `markMethod`, `queryKey`, `queryOptions`, `mutationOptions`. Marks a client method with its
// descriptor (the web client's createClient does). Must not change: no node: import and no server
// code: it runs in browsers (the bundle budget test checks).
import { stringifyJson } from "../codec/json.js";
import { callOptions, type CallOptions } from "../runtime/call-options.js";
import type { MethodDescriptor } from "../service/descriptors.js";

/**
 * Helpers for TanStack Query (and any library of its shape: a key and a function that gets an
 * AbortSignal), built from a typed client's method, as connect-query does for connect-es:
 *
 * ```ts
 * const greet = createClient(GreetContract, { baseUrl });
 * queryClient.fetchQuery(queryOptions(greet.greet, ["web"]));
 * useQuery(queryOptions(greet.greet, ["web"], { timeoutMs: 2000 }));
 * useMutation(mutationOptions(greet.rename));
 * ```
 *
 * The query key is `["triple-rpc", <service>, <method>, <arguments>]`: the service and wire
 * names of the method, and the arguments in their JSON form (bigints as strings, dates as ISO
 * text, maps as objects, bytes as base64), so it is stable, serializable and equal for equal
 * arguments; `["triple-rpc", <service>]` matches every query of a service (invalidation).
 */

const METHOD = Symbol.for("triple-rpc:web-method");

/** Marks a client method with its descriptor (the web client's createClient does). */
export function markMethod(fn: object, md: MethodDescriptor): void {
  Object.defineProperty(fn, METHOD, { value: md });
}

function methodOf(fn: unknown): MethodDescriptor {
  const md = typeof fn === "function" ? (fn as unknown as Record<symbol, MethodDescriptor | undefined>)[METHOD] : undefined;
  if (!md) throw new TypeError("queryOptions/mutationOptions: pass a method of a client made by triple-rpc/web's createClient (e.g. client.greet)");
  return md;
}

/** The query key of a method and its arguments (see above). */
export function queryKey(method: (...args: any[]) => unknown, args?: readonly unknown[]): readonly unknown[] {
  const md = methodOf(method);
  const key: unknown[] = ["triple-rpc", md.serviceName, md.name];
  if (args !== undefined) key.push(JSON.parse(stringifyJson(args)));
  return key;
}

type Params<F> = F extends (...args: infer A) => unknown ? (A extends [...infer P, CallOptions?] ? P : A) : never;
type Result<F> = F extends (...args: any[]) => infer R ? (R extends AsyncIterable<infer X> ? X[] : Awaited<R>) : never;

/** What `useQuery`/`fetchQuery` take: the key, and a function that calls the method with the query's AbortSignal. */
export interface RpcQueryOptions<T> {
  readonly queryKey: readonly unknown[];
  readonly queryFn: (context: { signal?: AbortSignal }) => Promise<T>;
}

/**
 * The query of a unary or server-streaming method called with `args` (a server stream's
 * messages are collected into an array). TanStack's AbortSignal cancels the call; `options`
 * (timeout, metadata …) go with every call.
 */
export function queryOptions<F extends (...args: any[]) => unknown>(
  method: F,
  args: Params<F>,
  options?: Omit<CallOptions, "signal">,
): RpcQueryOptions<Result<F>> {
  const md = methodOf(method);
  if (md.kind === "client_streaming" || md.kind === "bidi_streaming")
    throw new TypeError(`queryOptions: ${md.path} is ${md.kind.replace("_", " ")}; a query calls a unary or server-streaming method`);
  return {
    queryKey: queryKey(method, args),
    queryFn: async ({ signal }) => {
      const r = (method as (...a: unknown[]) => unknown)(...(args as unknown[]), callOptions({ ...options, signal }));
      if (md.kind === "unary") return (await r) as Result<F>;
      const out: unknown[] = [];
      for await (const x of r as AsyncIterable<unknown>) out.push(x);
      return out as Result<F>;
    },
  };
}

/** What `useMutation` takes: a key, and a function from the method's arguments (as an array) to its result. */
export interface RpcMutationOptions<A, T> {
  readonly mutationKey: readonly unknown[];
  readonly mutationFn: (args: A) => Promise<T>;
}

/** The mutation of a unary method: `mutate([arg1, arg2])`; the key is the query key without arguments. */
export function mutationOptions<F extends (...args: any[]) => unknown>(method: F, options?: CallOptions): RpcMutationOptions<Params<F>, Result<F>> {
  const md = methodOf(method);
  if (md.kind !== "unary") throw new TypeError(`mutationOptions: ${md.path} is ${md.kind.replace("_", " ")}; a mutation calls a unary method`);
  return {
    mutationKey: queryKey(method),
    mutationFn: (args) => (method as (...a: unknown[]) => Promise<Result<F>>)(...(args as unknown[]), callOptions({ ...options })),
  };
}
