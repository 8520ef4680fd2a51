// The page of bench/web.mjs, bundled with esbuild: our web client and connect-web calling the greet
// sample from the same Chromium page, over Connect JSON, one after the other.
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { createClient as createConnectClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import * as protobuf from "protobufjs";
import { Method, Param, Service, unimplemented } from "../src/contract.js";
import { createClient } from "../src/web.js";

declare const GREET_JSON: protobuf.INamespace;

/** The greet sample's contract, bound to greet.proto (a Root built from its JSON: no file in a browser). */
@Service("greet.GreetService", { proto: protobuf.Root.fromJSON(GREET_JSON) })
class GreetContract {
  @Method("Greet")
  greet(@Param() _req: { name: string }): Promise<{ greeting: string }> {
    return unimplemented();
  }
  @Method("GreetServerStream")
  greetServerStream(@Param() _req: { name: string }): AsyncIterable<{ greeting: string }> {
    return unimplemented();
  }
}

type Run = { calls: number; messages: number; ms: number };

async function timed(seconds: number, concurrency: number, one: () => Promise<number>): Promise<Run> {
  const end = performance.now() + seconds * 1000;
  let calls = 0;
  let messages = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        messages += await one();
        calls++;
      }
    }),
  );
  return { calls, messages, ms: performance.now() - t0 };
}

(globalThis as Record<string, unknown>).bench = async (baseUrl: string, setBase64: string, seconds: number, concurrency: number) => {
  const bytes = Uint8Array.from(atob(setBase64), (c) => c.charCodeAt(0));
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  const svc = registry.getService("greet.GreetService");
  if (!svc) throw new Error("greet.GreetService missing");
  const cw: any = createConnectClient(svc, createConnectTransport({ baseUrl }));
  const ours = createClient(GreetContract, { baseUrl, protocol: "connect", retries: 0 });
  const unary = {
    ours: async () => ((await ours.greet({ name: "triple" })).greeting === "triple" ? 1 : 0),
    connectWeb: async () => ((await cw.greet({ name: "triple" })).greeting === "triple" ? 1 : 0),
  };
  const stream = {
    ours: async () => {
      let n = 0;
      for await (const _ of ours.greetServerStream({ name: "b" })) n++;
      return n;
    },
    connectWeb: async () => {
      let n = 0;
      for await (const _ of cw.greetServerStream({ name: "b" })) n++;
      return n;
    },
  };
  const out: Record<string, Run> = {};
  // Warm up both, then alternate: ours, connect-web, ours, connect-web.
  await timed(1, concurrency, unary.ours);
  await timed(1, concurrency, unary.connectWeb);
  for (const round of [1, 2]) {
    out[`unary ours ${round}`] = await timed(seconds, concurrency, unary.ours);
    out[`unary connect-web ${round}`] = await timed(seconds, concurrency, unary.connectWeb);
    out[`stream ours ${round}`] = await timed(seconds, concurrency, stream.ours);
    out[`stream connect-web ${round}`] = await timed(seconds, concurrency, stream.connectWeb);
  }
  return out;
};
