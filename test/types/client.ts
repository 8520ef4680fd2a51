/**
 * Type-level tests of `Client<S>`: what a typed client's methods take and return, for every
 * streaming kind, the `@Ctx()` parameter dropped, call options last. Checked by typecheck only:
 * the functions below are never called (no server, no socket).
 */
import type { CallContext } from "../../src/index.js";
import { type CallOptions, type Client, type ClientMethod, type ClientResult, createClient } from "../../src/client.js";
import { createClient as createWebClient } from "../../src/web.js";
import { type Equal, expectTrue, expectType } from "./expect.js";

/** A plain class as a service: the shapes a method may have. */
class Shapes {
  /** A field, not a method: not on the client. */
  count = 0;
  greet(name: string): Promise<string> {
    return Promise.resolve(name);
  }
  /** Synchronous on the server, a Promise on the client. */
  add(a: number, b: number): number {
    return a + b;
  }
  /** The `@Ctx()` parameter is the server's: the client does not pass it. */
  whoAmI(ctx: CallContext): string {
    return String(ctx);
  }
  withCtx(name: string, ctx: CallContext, times: number): Promise<string> {
    return Promise.resolve(`${name}${String(ctx)}${times}`);
  }
  /** `any` is not mistaken for the context. */
  loose(x: any): Promise<void> {
    return Promise.resolve(x);
  }
  async *ticks(n: number): AsyncGenerator<bigint> {
    yield BigInt(n);
  }
  async sum(nums: AsyncIterable<number>): Promise<number> {
    let s = 0;
    for await (const n of nums) s += n;
    return s;
  }
  async *double(nums: AsyncIterable<number>): AsyncIterable<number> {
    for await (const n of nums) yield n * 2;
  }
  optional(name?: string): Promise<string | undefined> {
    return Promise.resolve(name);
  }
}

type C = Client<Shapes>;

// Methods only, by the same names.
expectTrue<Equal<keyof C, "greet" | "add" | "whoAmI" | "withCtx" | "loose" | "ticks" | "sum" | "double" | "optional">>();

// Unary: the arguments, then optional call options; the result is a Promise.
expectTrue<Equal<C["greet"], (name: string, options?: CallOptions) => Promise<string>>>();
expectTrue<Equal<C["add"], (a: number, b: number, options?: CallOptions) => Promise<number>>>();
expectTrue<Equal<C["whoAmI"], (options?: CallOptions) => Promise<string>>>();
expectTrue<Equal<C["withCtx"], (name: string, times: number, options?: CallOptions) => Promise<string>>>();
expectTrue<Equal<C["loose"], (x: any, options?: CallOptions) => Promise<void>>>();
// Server stream: an AsyncIterable of the messages (not a Promise, not the generator type).
expectTrue<Equal<C["ticks"], (n: number, options?: CallOptions) => AsyncIterable<bigint>>>();
// Client stream and bidi: the request stream is an AsyncIterable or a plain Iterable (an array).
expectTrue<Equal<C["sum"], (nums: AsyncIterable<number> | Iterable<number>, options?: CallOptions) => Promise<number>>>();
expectTrue<Equal<C["double"], (nums: AsyncIterable<number> | Iterable<number>, options?: CallOptions) => AsyncIterable<number>>>();

// The building blocks, public too.
expectTrue<Equal<ClientResult<Promise<Promise<number>>>, Promise<number>>>();
expectTrue<Equal<ClientResult<AsyncGenerator<string, void, undefined>>, AsyncIterable<string>>>();
expectTrue<Equal<ClientMethod<(x: string) => void>, (x: string, options?: CallOptions) => Promise<void>>>();
expectTrue<Equal<ClientMethod<string>, never>>();

/** Calls as an app writes them; never run. */
export async function calls(c: C, signal: AbortSignal): Promise<void> {
  expectType<Promise<string>>()(c.greet("x"));
  expectType<Promise<string>>()(c.greet("x", { signal, metadata: { "x-a": "1" } }));
  expectType<Promise<string | undefined>>()(c.optional());
  expectType<AsyncIterable<bigint>>()(c.ticks(3));
  for await (const t of c.ticks(3)) expectType<bigint>()(t);
  expectType<Promise<number>>()(c.sum([1, 2, 3]));
  for await (const d of c.double(
    (async function* () {
      yield 1;
    })(),
  ))
    expectType<number>()(d);

  // @ts-expect-error: a number where the method takes a string
  await c.greet(1);
  // @ts-expect-error: a required argument missing
  await c.greet();
  // @ts-expect-error: one argument too many (a string is not call options)
  await c.greet("x", "y");
  // @ts-expect-error: not a call option
  await c.greet("x", { signal, retries: 3 });
  // @ts-expect-error: the context is the server's, not an argument
  await c.whoAmI({} as CallContext, {});
  // @ts-expect-error: fields are not on the client
  c.count;
  // @ts-expect-error: no such method
  await c.nope();
  // @ts-expect-error: a request stream of numbers, not strings
  await c.sum(["1"]);
  // @ts-expect-error: a server stream is not awaited for one value
  const n: bigint = await c.ticks(1);
  void n;
}

/** createClient (Node and web) infer `Client<S>` from the class. */
export function created(): void {
  expectType<Client<Shapes>>()(createClient(Shapes, { providers: ["127.0.0.1:1"] }));
  expectType<Client<Shapes>>()(createWebClient(Shapes, { baseUrl: "http://127.0.0.1:1" }));
  // A .proto service: untyped by default, or the caller's type.
  expectType<Record<string, (...args: any[]) => any>>()(createClient({ proto: "x.proto", service: "x.S" }, { providers: ["127.0.0.1:1"] }));
  expectType<{ ping(): Promise<void> }>()(createClient<{ ping(): Promise<void> }>({ proto: "x.proto", service: "x.S" }, { providers: ["127.0.0.1:1"] }));
}
