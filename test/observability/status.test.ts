import * as assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { closeClient, Code, createClient, createServer, type RpcError, type TripleServer } from "../../src/index.js";
import { clients, unary } from "../grpc/grpc-js-client.js";
import { post1 } from "../helpers/http.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { ProbeService } from "./otel-service.js";
import { createSdk, registerGlobally, waitForSpans } from "./sdk.js";

const sdk = createSdk();
registerGlobally(sdk);

describe("span status at a call's end: deadlines, cancellations, foreign callers", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new ProbeService(), new GreetServiceImpl()], logger: { info() {}, warn() {}, error() {} } });
    await server.listen({ port: 0 });
  });
  after(() => server.close());
  beforeEach(() => sdk.spans.reset());

  for (const protocol of ["grpc", "triple"] as const) {
    it(`${protocol}: a deadline that passes is DEADLINE_EXCEEDED, an error on the client span`, async () => {
      const c = createClient(ProbeService, { providers: [server.url], protocol, retries: 0, timeoutMs: 60 });
      try {
        await assert.rejects(c.slow(400), (e: RpcError) => e.code === Code.DeadlineExceeded);
      } finally {
        closeClient(c);
      }
      const [cs] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.CLIENT);
      assert.equal(cs.attributes["rpc.status_code"], "DEADLINE_EXCEEDED");
      assert.equal(cs.status.code, SpanStatusCode.ERROR);
      // The server's own timer or the client's cancellation, whichever came first.
      const [ss] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.SERVER);
      assert.ok(["DEADLINE_EXCEEDED", "CANCELLED"].includes(String(ss.attributes["rpc.status_code"])));
    });
  }

  it("the server's deadline passing is DEADLINE_EXCEEDED, an error on the server span", async () => {
    const r = await post1(server.url, "/otel.Probe/slow", {
      headers: { "content-type": "application/json", "tri-service-timeout": "50" },
      body: "[400]",
    });
    assert.equal(r.status, 408, "deadline_exceeded is 408 in the Triple status table");
    const [ss] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.SERVER);
    assert.equal(ss.attributes["rpc.status_code"], "DEADLINE_EXCEEDED");
    assert.equal(ss.status.code, SpanStatusCode.ERROR);
    assert.equal(ss.attributes["error.type"], "DEADLINE_EXCEEDED");
  });

  it("a caller that cancels: the server span says CANCELLED and stays UNSET; the client span is an error", async () => {
    const c = createClient(ProbeService, { providers: [server.url], protocol: "grpc", retries: 0 });
    const ac = new AbortController();
    try {
      const pending = c.slow(400, { signal: ac.signal });
      setTimeout(() => ac.abort(), 50);
      await assert.rejects(pending, (e: RpcError) => e.code === Code.Cancelled);
    } finally {
      closeClient(c);
    }
    const [ss] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.SERVER);
    assert.equal(ss.attributes["rpc.status_code"], "CANCELLED");
    assert.equal(ss.status.code, SpanStatusCode.UNSET);
    const [cs] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.CLIENT);
    assert.equal(cs.attributes["rpc.status_code"], "CANCELLED");
    assert.equal(cs.status.code, SpanStatusCode.ERROR);
  });

  it("a grpc-js caller's traceparent metadata is honoured", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const md = new grpc.Metadata();
    md.set("traceparent", `00-${traceId}-b7ad6b7169203331-01`);
    const client = new clients.greet(`${server.address.address}:${server.address.port}`, grpc.credentials.createInsecure());
    try {
      const out = await unary(client, "Greet", { name: "triple" }, { metadata: md });
      assert.equal(out.error, undefined);
    } finally {
      client.close();
    }
    const [ss] = await waitForSpans(sdk, 1, (s) => s.kind === SpanKind.SERVER);
    assert.equal(ss.name, "greet.GreetService/Greet");
    assert.equal(ss.spanContext().traceId, traceId);
    assert.equal(ss.parentSpanContext?.spanId, "b7ad6b7169203331");
    assert.equal(ss.attributes["rpc.system.name"], "grpc");
  });
});
