import * as assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient, createServer, type TripleServer } from "../../src/index.js";
import { waitForListening } from "../helpers/child.js";
import { freePort } from "../helpers/zookeeper.js";
import { QUIET } from "./dubbo-interop.js";
import { dubboJavaSkip, requireDubboJava } from "./dubbo-peer.js";
import { compiledProtoPrograms, type HelloReply, type HelloRequest, PbGreeter, protoMissing, startProtoJava, stopProtoJava } from "./dubbo-proto-peer.js";

/**
 * A `.proto` service between Dubbo 3.3.1 Java and ours, with Dubbo's protobuf serialization over
 * Triple and no stub generator: test/java/dubbo-proto holds pbgreet.proto, a plain Java interface
 * whose methods take and return the message classes `protoc --java_out` generates (Dubbo sees
 * protobuf classes and sends them bare, as gRPC does), a Java provider and a Java consumer. Our
 * side binds the same .proto. Both directions, unary and server stream.
 */

class OurPbGreeter extends PbGreeter {
  override async hello(req: HelloRequest): Promise<HelloReply> {
    return reply(req, "");
  }

  override async *helloStream(req: HelloRequest): AsyncIterable<HelloReply> {
    for (let i = 1; i <= 3; i++) yield reply(req, ` #${i}`);
  }
}

const reply = (req: HelloRequest, suffix: string): HelloReply => ({
  message: `hello ${req.name} from ts${suffix}`,
  id: BigInt(req.id) + 1n,
  tags: req.tags.length,
});

const java = (classes: string, main: string, args: readonly string[]) => startProtoJava(classes, main, args);

/** Runs PbConsumer against `url`; its output lines (replies "message|id|tags", then DONE, or ERROR …). */
async function javaConsumer(classes: string, url: string, name: string): Promise<string[]> {
  const proc = await java(classes, "org.triplerpc.pb.PbConsumer", [url, name]);
  let out = "";
  proc.stdout?.on("data", (c: Buffer) => {
    out += c.toString("utf8");
  });
  proc.stderr?.resume();
  const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  await new Promise((r) => proc.once("exit", r));
  clearTimeout(timer);
  return out.split("\n").filter((l) => l.includes("|") || l.startsWith("DONE") || l.startsWith("ERROR"));
}

const skip = dubboJavaSkip() || (protoMissing() !== undefined && !process.env.CI ? `protoc or the Dubbo Java peer unavailable: ${protoMissing()}` : false);

describe("a .proto service between Dubbo Java (protobuf serialization, no stub generator) and ours", { skip }, () => {
  let classes: string;
  let provider: ChildProcess | undefined;
  let port: number;
  let server: TripleServer;

  before(async () => {
    requireDubboJava();
    const why = protoMissing();
    if (why !== undefined) throw new Error(`the Dubbo protobuf tests cannot run (and CI is set, so they fail rather than skip): ${why}`);
    classes = await compiledProtoPrograms();
    port = await freePort();
    provider = await java(classes, "org.triplerpc.pb.PbProvider", [String(port)]);
    server = createServer({ logger: QUIET, services: [new OurPbGreeter()] });
    await Promise.all([waitForListening(provider, "the Dubbo Java protobuf provider", 60_000), server.listen({ port: 0, host: "127.0.0.1" })]);
    provider.stderr?.resume();
  });
  after(async () => {
    await stopProtoJava(provider);
    await server?.close();
  });

  for (const protocol of ["grpc", "triple"] as const) {
    it(`our .proto client (${protocol}) calls the Java provider: unary${protocol === "grpc" ? " and server stream" : ""}, int64, repeated`, async () => {
      const c = createClient(PbGreeter, { providers: [`http://127.0.0.1:${port}`], protocol, retries: 0, timeoutMs: 15_000, logger: QUIET });
      try {
        // A .proto client sends an int64 as a JavaScript integer (within ±2^53) and reads it as a decimal string.
        const req = { name: "ann", id: -(2 ** 53) + 1, tags: ["a", "é"] };
        const r = await c.hello(req);
        assert.deepEqual({ ...r }, { message: "hello ann from java", id: "-9007199254740990", tags: 2 });
        // Streams: gRPC only (Dubbo 3.3.1 answers our Triple-protocol stream with an HTTP 500; docs/registry.md).
        if (protocol === "triple") return;
        const got: string[] = [];
        for await (const m of c.helloStream(req)) got.push(`${m.message}|${m.id}|${m.tags}`);
        assert.deepEqual(
          got,
          [1, 2, 3].map((i) => `hello ann from java #${i}|-9007199254740990|2`),
        );
      } finally {
        await closeClient(c);
      }
    });
  }

  it("the Dubbo Java consumer calls our .proto provider: unary and server stream, int64 at its edge (Long.MIN_VALUE + 1)", async () => {
    const lines = await javaConsumer(classes, `tri://127.0.0.1:${new URL(server.url).port}`, "bob");
    assert.deepEqual(lines, ["hello bob from ts|-9223372036854775806|2", ...[1, 2, 3].map((i) => `hello bob from ts #${i}|-9223372036854775806|2`), "DONE"]);
  });
});
