import { type CallContext, Code, RpcError } from "../../src/index.js";
import { Profile, WebTestContract } from "./contract.js";

/** The web test contract's implementation, run by our server in the web client's tests. */
export class WebTestService extends WebTestContract {
  /** Calls of `flaky` per key: the first two fail with `unavailable`. */
  readonly flakyCalls = new Map<string, number>();

  override async greet(name: string): Promise<string> {
    if (name === "nobody") throw new RpcError(Code.InvalidArgument, `name is not right: ${name}`);
    return `hello, ${name}`;
  }

  override async add(a: number, b: number): Promise<number> {
    return a + b;
  }

  override async profile(name: string, balance: bigint): Promise<Profile> {
    const p = new Profile();
    p.name = name;
    p.born = new Date(Date.UTC(2000, 1, 29, 12, 0, 0));
    p.balance = balance * 2n;
    p.scores = new Map([
      ["a", 1],
      ["b", 2],
    ]);
    p.avatar = new Uint8Array([0, 1, 254, 255]);
    return p;
  }

  override async price(text: string): Promise<string> {
    return text;
  }

  override async nextDay(d: Date): Promise<Date> {
    return new Date(d.getTime() + 86_400_000);
  }

  override async label(code: string, n: number): Promise<string> {
    return `${code}-${n}`;
  }

  override slow(ms: number, ctx: CallContext): Promise<string> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve("done"), ms);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        resolve("aborted");
      });
    });
  }

  override async headers(ctx: CallContext): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const k of ["authorization", "x-custom", "tri-service-timeout", "connect-timeout-ms", "grpc-timeout", "tri-service-version"]) {
      const v = ctx.requestHeaders.get(k);
      if (v !== undefined) out[k] = v;
    }
    out[":http-version"] = ctx.httpVersion;
    ctx.responseHeaders.set("x-answer", "42");
    return out;
  }

  override async flaky(key: string): Promise<number> {
    const n = (this.flakyCalls.get(key) ?? 0) + 1;
    this.flakyCalls.set(key, n);
    if (n <= 2) throw new RpcError(Code.Unavailable, `not yet (${n})`);
    return n;
  }

  override async *count(n: number): AsyncGenerator<bigint> {
    for (let i = 1; i <= n; i++) yield BigInt(i) * 10_000_000_000n;
  }

  override async sum(nums: AsyncIterable<number>): Promise<number> {
    let s = 0;
    for await (const x of nums) s += x;
    return s;
  }

  override async *double(nums: AsyncIterable<number>): AsyncGenerator<number> {
    for await (const x of nums) yield x * 2;
  }
}
