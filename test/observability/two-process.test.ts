import * as assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import { closeClient, createClient } from "../../src/index.js";
import { ProbeService } from "./otel-service.js";
import { createSdk, registerGlobally, waitForSpans } from "./sdk.js";

const sdk = createSdk();
registerGlobally(sdk);

interface RemoteSpan {
  name: string;
  kind: SpanKind;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
}

describe("a client and a server in two processes", () => {
  let child: ChildProcessWithoutNullStreams;
  let lines: Interface;
  let next: () => Promise<string>;
  let port: number;

  before(async () => {
    child = spawn(process.execPath, [join(__dirname, "child-server.js")], { stdio: ["pipe", "pipe", "pipe"] });
    lines = createInterface({ input: child.stdout });
    const it = lines[Symbol.asyncIterator]();
    next = async () => {
      const r = await it.next();
      if (r.done) throw new Error("the child process ended");
      return r.value;
    };
    port = (JSON.parse(await next()) as { port: number }).port;
  });
  after(() => {
    lines.close();
    child.kill();
  });

  it("the client span in this process is the parent of the server span in the other, over gRPC and Triple HTTP", async () => {
    const grpc = createClient(ProbeService, { providers: [`127.0.0.1:${port}`], protocol: "grpc", retries: 0 });
    const http = createClient(ProbeService, { providers: [`127.0.0.1:${port}`], httpVersion: "1.1", retries: 0 });
    try {
      assert.equal(await grpc.hello("far"), "hello far");
      assert.equal(await http.hello("near"), "hello near");
    } finally {
      closeClient(grpc);
      closeClient(http);
    }
    const clientSpans = await waitForSpans(sdk, 2, (s) => s.kind === SpanKind.CLIENT);
    child.stdin.write("dump\n");
    const { spans } = JSON.parse(await next()) as { spans: RemoteSpan[] };
    const serverSpans = spans.filter((s) => s.kind === SpanKind.SERVER);
    assert.equal(serverSpans.length, 2);
    for (const cs of clientSpans) {
      const system = cs.attributes["rpc.system.name"];
      const ss = serverSpans.find((s) => s.attributes["rpc.system.name"] === system);
      assert.ok(ss, `a server span for ${String(system)}`);
      assert.equal(ss.traceId, cs.spanContext().traceId);
      assert.equal(ss.parentSpanId, cs.spanContext().spanId);
      assert.equal(ss.name, "otel.Probe/hello");
    }
  });
});
