// The Chromium test's page: the web client from src, the test contract, every protocol; results as plain JSON.
import { badRequestViolations, createClient, RpcError, type WebClientOptions } from "../../../src/web.js";
import { Profile, WebTestContract } from "../contract.js";

type Outcome = Record<string, unknown>;

async function outcome(f: () => Promise<unknown>): Promise<Outcome> {
  const t0 = performance.now();
  try {
    return { value: await f(), ms: Math.round(performance.now() - t0) };
  } catch (e) {
    const err = e instanceof RpcError ? { code: e.code, message: e.message, violations: badRequestViolations(e) } : { message: String(e) };
    return { error: err, ms: Math.round(performance.now() - t0) };
  }
}

async function runOne(baseUrl: string, opts: Partial<WebClientOptions>): Promise<Record<string, Outcome>> {
  const c = createClient(WebTestContract, { baseUrl, ...opts });
  const ac = new AbortController();
  return {
    greet: await outcome(() => c.greet("browser")),
    add: await outcome(() => c.add(40, 2)),
    profile: await outcome(async () => {
      const p = await c.profile("Ada Lovelace", 21n);
      return {
        isProfile: p instanceof Profile,
        initials: p.initials(),
        born: p.born instanceof Date ? p.born.toISOString() : "not a Date",
        balance: typeof p.balance === "bigint" ? `${p.balance}n` : "not a bigint",
        scores: p.scores instanceof Map ? [...p.scores] : "not a Map",
        avatar: p.avatar instanceof Uint8Array ? [...p.avatar] : "not bytes",
      };
    }),
    error: await outcome(() => c.greet("nobody")),
    violations: await outcome(() => c.label("ABCDEF", 0)),
    stream: await outcome(async () => {
      const out: string[] = [];
      for await (const x of c.count(3)) out.push(`${x}n`);
      return out;
    }),
    deadline: await outcome(() => c.slow(5000, { timeoutMs: 300 })),
    cancel: await outcome(() => {
      setTimeout(() => ac.abort(), 200);
      return c.slow(5000, { signal: ac.signal });
    }),
    headers: await outcome(() => c.headers({ metadata: { "x-custom": "from-page" }, timeoutMs: 10_000 })),
  };
}

(globalThis as Record<string, unknown>).runWeb = async (baseUrl: string, variants: Record<string, Partial<WebClientOptions>>) => {
  const out: Record<string, Record<string, Outcome>> = {};
  for (const [name, opts] of Object.entries(variants)) out[name] = await runOne(baseUrl, opts);
  return out;
};
