import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { createServer, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { ProbeService } from "./otel-service.js";
import { createSdk, waitForSpans } from "./sdk.js";

describe("trustRemoteParent: false", () => {
  const sdk = createSdk();
  let server: TripleServer;
  before(async () => {
    server = createServer({
      services: [new ProbeService()],
      telemetry: { tracerProvider: sdk.tracerProvider, propagator: new W3CTraceContextPropagator(), trustRemoteParent: false },
    });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("starts a new trace per call, linked to the caller's span", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const r = await post1(server.url, "/otel.Probe/hello", {
      headers: { "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: '["x"]',
    });
    assert.equal(r.status, 200);
    const [ss] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.SERVER);
    assert.notEqual(ss.spanContext().traceId, traceId);
    assert.equal(ss.parentSpanContext, undefined);
    assert.equal(ss.links.length, 1);
    assert.equal(ss.links[0].context.traceId, traceId);
    assert.equal(ss.links[0].context.spanId, "00f067aa0ba902b7");
  });

  it("with the default (true), the same header makes the caller the parent", async () => {
    const trusting = createServer({
      services: [new ProbeService()],
      telemetry: { tracerProvider: sdk.tracerProvider, propagator: new W3CTraceContextPropagator() },
    });
    await trusting.listen({ port: 0 });
    sdk.spans.reset();
    try {
      const traceId = "0af7651916cd43dd8448eb211c80319c";
      await post1(trusting.url, "/otel.Probe/hello", {
        headers: { "content-type": "application/json", traceparent: `00-${traceId}-b7ad6b7169203331-01` },
        body: '["x"]',
      });
      const [ss] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.SERVER);
      assert.equal(ss.spanContext().traceId, traceId);
      assert.equal(ss.parentSpanContext?.spanId, "b7ad6b7169203331");
    } finally {
      await trusting.close();
    }
  });
});
