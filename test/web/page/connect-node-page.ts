// The page of test/browser/connect-node-browser: the web client from src against connect-node's
// server, from a contract made in the page from greet.proto's JSON (a browser cannot read a
// .proto file: it passes a loaded protobufjs Root). Results as plain JSON.
import * as protobuf from "protobufjs";
import { Service, unimplemented } from "../../../src/contract-browser.js";
import { createClient, RpcError, type WebClientOptions } from "../../../src/web.js";

type Outcome = { value?: unknown; error?: { code: number; message: string }; ms: number };

async function outcome(f: () => Promise<unknown>): Promise<Outcome> {
  const t0 = performance.now();
  try {
    return { value: await f(), ms: Math.round(performance.now() - t0) };
  } catch (e) {
    const error = e instanceof RpcError ? { code: e.code, message: e.message } : { code: -1, message: String(e) };
    return { error, ms: Math.round(performance.now() - t0) };
  }
}

/** The greet service's contract, bound to the loaded .proto (its rpcs are bound by name, no @Method needed). */
function greetContract(protoJson: protobuf.INamespace) {
  class GreetContract {
    greet(_req: { name: string }): Promise<{ greeting: string }> {
      return unimplemented();
    }
    greetServerStream(_req: { name: string }): AsyncIterable<{ greeting: string }> {
      return unimplemented();
    }
  }
  Service("greet.GreetService", { proto: protobuf.Root.fromJSON(protoJson) })(GreetContract);
  return GreetContract;
}

async function runOne(baseUrl: string, contract: ReturnType<typeof greetContract>, opts: Partial<WebClientOptions>): Promise<Record<string, Outcome>> {
  const c = createClient(contract, { baseUrl, ...opts });
  const ac = new AbortController();
  return {
    unary: await outcome(() => c.greet({ name: "triple" })),
    error: await outcome(() => c.greet({ name: "nobody" })),
    stream: await outcome(async () => {
      const out: string[] = [];
      for await (const m of c.greetServerStream({ name: "browser" })) out.push(m.greeting);
      return out;
    }),
    cancel: await outcome(async () => {
      const out: string[] = [];
      for await (const m of c.greetServerStream({ name: "slow" }, { signal: ac.signal })) {
        out.push(m.greeting);
        ac.abort();
      }
      return out;
    }),
  };
}

(globalThis as { runConnectNode?: unknown }).runConnectNode = async (
  baseUrl: string,
  protoJson: protobuf.INamespace,
  variants: Record<string, Partial<WebClientOptions>>,
) => {
  const contract = greetContract(protoJson);
  const out: Record<string, Record<string, Outcome>> = {};
  for (const [name, opts] of Object.entries(variants)) out[name] = await runOne(baseUrl, contract, opts);
  return out;
};
