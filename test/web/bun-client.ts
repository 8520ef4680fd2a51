// Run by Bun (test/web/bun.test.ts): the web client from the sources against the server at argv[2]; prints the outcomes as JSON.
import { Code, createClient, RpcError } from "../../src/web.js";
import { Profile, WebTestContract } from "./contract.js";

async function run(baseUrl: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { runtime: typeof (globalThis as { Bun?: unknown }).Bun === "object" ? "bun" : "other" };
  for (const protocol of ["triple", "connect", "grpc-web"] as const) {
    const c = createClient(WebTestContract, { baseUrl, protocol });
    const p = await c.profile("Ada Lovelace", 21n);
    const stream: string[] = [];
    for await (const x of c.count(2)) stream.push(`${x}n`);
    const err = await c.greet("nobody").catch((e: unknown) => e);
    const deadline = await c.slow(5000, { timeoutMs: 200 }).catch((e: unknown) => e);
    out[protocol] = {
      greet: await c.greet("bun"),
      profile: p instanceof Profile && p.born instanceof Date && p.balance === 42n && p.scores instanceof Map,
      stream,
      error: err instanceof RpcError ? [err.code, err.message] : String(err),
      deadline: deadline instanceof RpcError && deadline.code === Code.DeadlineExceeded,
    };
  }
  return out;
}

run(process.argv[2]).then(
  (r) => console.log(JSON.stringify(r)),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
