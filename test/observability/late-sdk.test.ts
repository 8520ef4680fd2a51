import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import { closeClient, createClient, createServer, type TripleServer } from "../../src/index.js";
import { ProbeService } from "./otel-service.js";
import { createSdk, metricNamed, registerGlobally, waitForSpans } from "./sdk.js";

describe("an SDK registered after the server and client were created", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new ProbeService()] });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("is picked up within 128 calls, for spans and for metrics", async () => {
    const c = createClient(ProbeService, { providers: [server.url], protocol: "grpc", retries: 0 });
    try {
      assert.equal(await c.hello("before"), "hello before");
      const sdk = createSdk();
      registerGlobally(sdk);
      for (let i = 0; i < 130; i++) await c.hello(`after ${i}`);
      const spans = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.SERVER);
      assert.ok(spans.length >= 2 && spans.length <= 130, `${spans.length} server spans`);
      const clientSpans = sdk.spans.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
      assert.ok(clientSpans.length >= 2, `${clientSpans.length} client spans`);
      const duration = await metricNamed(sdk, "rpc.server.call.duration");
      assert.ok((duration?.dataPoints.length ?? 0) > 0, "metrics too: the meter was fetched once the SDK was there");
    } finally {
      closeClient(c);
    }
  });
});
