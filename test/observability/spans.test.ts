import * as assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { context, propagation, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { type Client, closeClient, Code, createClient, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { ProbeService } from "./otel-service.js";
import { createSdk, registerGlobally, waitForSpans } from "./sdk.js";

const sdk = createSdk();
registerGlobally(sdk);

const server_ = (s: ReadableSpan) => s.kind === SpanKind.SERVER;
const client_ = (s: ReadableSpan) => s.kind === SpanKind.CLIENT;

/** The one CLIENT and one SERVER span of a call, after checking they are parent and child. */
async function pair(): Promise<{ client: ReadableSpan; server: ReadableSpan }> {
  await waitForSpans(sdk, 1, server_);
  const [client] = await waitForSpans(sdk, 1, client_);
  const [server] = await waitForSpans(sdk, 1, server_);
  assert.equal(server.spanContext().traceId, client.spanContext().traceId, "one trace");
  assert.equal(server.parentSpanContext?.spanId, client.spanContext().spanId, "the client span is the server span's parent");
  return { client, server };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}

async function* values<T>(list: readonly T[]): AsyncGenerator<T> {
  for (const v of list) yield v;
}

describe("OpenTelemetry spans (SDK registered globally)", () => {
  let server: TripleServer;
  let port: number;
  const clients: object[] = [];
  const client = (o: Parameters<typeof createClient>[1]): Client<ProbeService> => {
    const c = createClient(ProbeService, { ...o, retries: 0 });
    clients.push(c);
    return c;
  };

  before(async () => {
    server = createServer({ services: [new ProbeService()], logger: { info() {}, warn() {}, error() {} } });
    port = (await server.listen({ port: 0 })).port;
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await server.close();
  });
  beforeEach(() => sdk.spans.reset());

  it("gRPC unary: a CLIENT and a SERVER span named pkg.Svc/Method, parent and child, with the conventions' attributes", async () => {
    const c = client({ providers: [server.url], protocol: "grpc" });
    assert.equal(await c.hello("ada"), "hello ada");
    const { client: cs, server: ss } = await pair();
    for (const s of [cs, ss]) {
      assert.equal(s.name, "otel.Probe/hello");
      assert.equal(s.attributes["rpc.system.name"], "grpc");
      assert.equal(s.attributes["rpc.method"], "otel.Probe/hello");
      assert.equal(s.attributes["rpc.status_code"], "OK");
      assert.equal(s.attributes["error.type"], undefined);
      assert.equal(s.status.code, SpanStatusCode.UNSET);
      assert.equal(s.attributes["server.address"], "127.0.0.1");
      assert.equal(s.attributes["server.port"], port);
    }
    assert.equal(ss.attributes["network.peer.address"], "127.0.0.1");
    assert.equal(typeof ss.attributes["network.peer.port"], "number");
    assert.equal(ss.instrumentationScope.name, "triple-rpc");
  });

  for (const httpVersion of ["1.1", "2"] as const) {
    it(`Triple HTTP/${httpVersion} unary: rpc.system.name dubbo, trace context carried in the headers`, async () => {
      const c = client({ providers: [server.url], httpVersion });
      assert.equal(await c.hello("bo"), "hello bo");
      const { client: cs, server: ss } = await pair();
      assert.equal(cs.attributes["rpc.system.name"], "dubbo");
      assert.equal(ss.attributes["rpc.system.name"], "dubbo");
      assert.equal(ss.name, "otel.Probe/hello");
      assert.equal(ss.attributes["rpc.status_code"], "OK");
    });
  }

  for (const [protocol, system] of [
    ["connect", "connectrpc"],
    ["grpc-web", "grpc"],
  ] as const) {
    for (const httpVersion of ["1.1", "2"] as const) {
      it(`${protocol} HTTP/${httpVersion} unary: rpc.system.name ${system}, parent and child across the call`, async () => {
        const c = client({ providers: [server.url], protocol, httpVersion });
        assert.equal(await c.hello("cy"), "hello cy");
        const { client: cs, server: ss } = await pair();
        assert.equal(ss.name, "otel.Probe/hello");
        assert.equal(ss.attributes["rpc.system.name"], system);
        assert.equal(cs.attributes["rpc.system.name"], system);
      });
    }
    it(`${protocol} server stream over HTTP/2: one span pair that lasts until the stream ends`, async () => {
      const c = client({ providers: [server.url], protocol });
      assert.deepEqual(await collect(c.count(2)), [1, 2]);
      const { server: ss } = await pair();
      assert.equal(ss.name, "otel.Probe/count");
      // Connect's status names are its lower-case code strings; gRPC's are upper case.
      assert.equal(ss.attributes["rpc.status_code"], protocol === "connect" ? "ok" : "OK");
    });
  }

  it("a call to a method the server does not know: one SERVER span, rpc.method _OTHER with rpc.method_original", async () => {
    const cases: { headers: Record<string, string>; system: string; status: string }[] = [
      { headers: { "content-type": "application/json" }, system: "dubbo", status: "UNIMPLEMENTED" },
      { headers: { "content-type": "application/json", "connect-protocol-version": "1" }, system: "connectrpc", status: "unimplemented" },
    ];
    for (const c of cases) {
      sdk.spans.reset();
      const r = await post1(server.url, "/otel.Probe/nope", { headers: c.headers, body: "{}" });
      assert.equal(r.status, 404);
      const [span] = await waitForSpans(sdk, 1, server_);
      assert.equal(span.name, c.system);
      assert.equal(span.attributes["rpc.system.name"], c.system);
      assert.equal(span.attributes["rpc.method"], "_OTHER");
      assert.equal(span.attributes["rpc.method_original"], "otel.Probe/nope");
      assert.equal(span.attributes["rpc.status_code"], c.status);
      assert.equal(span.status.code, SpanStatusCode.ERROR, "unimplemented is a server error");
    }
    // A known method refused before its handler (a bad timeout header) keeps its name.
    sdk.spans.reset();
    const bad = await post1(server.url, "/otel.Probe/hello", { headers: { "content-type": "application/json", "tri-service-timeout": "soon" }, body: '["x"]' });
    assert.equal(bad.status, 400);
    const [span] = await waitForSpans(sdk, 1, server_);
    assert.equal(span.name, "otel.Probe/hello");
    assert.equal(span.attributes["rpc.method"], "otel.Probe/hello");
    assert.equal(span.attributes["rpc.status_code"], "INVALID_ARGUMENT");
    assert.equal(span.status.code, SpanStatusCode.UNSET);
  });

  it("gRPC server stream: the spans last until the stream ends", async () => {
    const c = client({ providers: [server.url], protocol: "grpc" });
    const t0 = Date.now();
    assert.deepEqual(await collect(c.count(4)), [1, 2, 3, 4]);
    const elapsed = Date.now() - t0;
    const { client: cs, server: ss } = await pair();
    assert.equal(ss.name, "otel.Probe/count");
    assert.equal(ss.attributes["rpc.status_code"], "OK");
    const ms = (s: ReadableSpan) => s.duration[0] * 1000 + s.duration[1] / 1e6;
    assert.ok(ms(ss) >= 50, `server span ${ms(ss)} ms covers the four 15 ms messages`);
    assert.ok(ms(cs) >= ms(ss) - 1 && ms(cs) <= elapsed + 5, `client span ${ms(cs)} ms, call ${elapsed} ms`);
  });

  it("gRPC client stream and bidi stream: one span pair each", async () => {
    const c = client({ providers: [server.url], protocol: "grpc" });
    assert.equal(await c.sum(values([1, 2, 3])), 6);
    const first = await pair();
    assert.equal(first.server.name, "otel.Probe/sum");
    assert.equal(first.client.attributes["rpc.status_code"], "OK");
    sdk.spans.reset();
    assert.deepEqual(await collect(c.echo(values(["a", "b"]))), ["A", "B"]);
    const second = await pair();
    assert.equal(second.server.name, "otel.Probe/echo");
    assert.equal(second.server.attributes["rpc.status_code"], "OK");
  });

  it("Server-Sent Events: a caller's traceparent is the server span's parent", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const r = await post1(server.url, "/otel.Probe/count", {
      headers: { "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: "[2]",
    });
    assert.equal(r.status, 200);
    assert.match(r.text(), /data: 2/);
    const [ss] = await waitForSpans(sdk, 1, server_);
    assert.equal(ss.spanContext().traceId, traceId);
    assert.equal(ss.parentSpanContext?.spanId, "00f067aa0ba902b7");
    assert.equal(ss.attributes["rpc.system.name"], "dubbo");
    assert.equal(ss.attributes["rpc.status_code"], "OK");
  });

  it("a handler's RpcError NOT_FOUND: server span UNSET, client span ERROR with error.type", async () => {
    const c = client({ providers: [server.url], protocol: "grpc" });
    await assert.rejects(c.fail(Code.NotFound), (e: RpcError) => e.code === Code.NotFound);
    const { client: cs, server: ss } = await pair();
    assert.equal(ss.attributes["rpc.status_code"], "NOT_FOUND");
    assert.equal(ss.status.code, SpanStatusCode.UNSET);
    assert.equal(ss.attributes["error.type"], undefined);
    assert.equal(cs.attributes["rpc.status_code"], "NOT_FOUND");
    assert.equal(cs.status.code, SpanStatusCode.ERROR);
    assert.equal(cs.attributes["error.type"], "NOT_FOUND");
  });

  it("INTERNAL and a plain Error (UNKNOWN) are errors on the server span; the plain error is recorded as an exception", async () => {
    const c = client({ providers: [server.url], httpVersion: "1.1" });
    await assert.rejects(c.fail(Code.Internal), (e: RpcError) => e.code === Code.Internal);
    let { server: ss } = await pair();
    assert.equal(ss.status.code, SpanStatusCode.ERROR);
    assert.equal(ss.attributes["rpc.status_code"], "INTERNAL");
    assert.equal(ss.attributes["error.type"], "INTERNAL");
    sdk.spans.reset();
    await assert.rejects(c.boom("x"), (e: RpcError) => e.code === Code.Unknown);
    ({ server: ss } = await pair());
    assert.equal(ss.status.code, SpanStatusCode.ERROR);
    assert.equal(ss.attributes["error.type"], "UNKNOWN");
    const ex = ss.events.find((e) => e.name === "exception");
    assert.equal(ex?.attributes?.["exception.type"], "TypeError");
    assert.match(String(ex?.attributes?.["exception.stacktrace"]), /kaboom: x/);
  });

  it("the handler runs inside the server span: its own span is a child, and the caller's baggage reaches it", async () => {
    const c = client({ providers: [server.url], protocol: "grpc" });
    const bag = propagation.createBaggage({ user: { value: "ada" } });
    const parent = trace.getTracer("test").startSpan("caller");
    const ctx = trace.setSpan(propagation.setBaggage(context.active(), bag), parent);
    const out = await context.with(ctx, () => c.nested());
    parent.end();
    assert.equal(out.baggage, "ada");
    const { client: cs, server: ss } = await pair();
    assert.equal(cs.parentSpanContext?.spanId, parent.spanContext().spanId, "the client span nests under the caller's");
    const [work] = await waitForSpans(sdk, 1, (s) => s.name === "handler-work");
    assert.equal(work.parentSpanContext?.spanId, ss.spanContext().spanId);
    assert.equal(out.traceId, ss.spanContext().traceId);
  });

  it("a retried call is one CLIENT span; the failed attempt is an event on it", async () => {
    // A port nobody listens on first, then the real server.
    const dead = createServer({ services: [] });
    const deadPort = (await dead.listen({ port: 0 })).port;
    await dead.close();
    const c = createClient(ProbeService, {
      providers: [`127.0.0.1:${deadPort}`, server.url],
      protocol: "grpc",
      loadBalance: "roundrobin",
      retries: 1,
      logger: { info() {}, warn() {}, error() {} },
    });
    clients.push(c);
    for (let i = 0; i < 2; i++) assert.equal(await c.hello("r"), "hello r");
    const cs = await waitForSpans(sdk, 2, client_);
    assert.equal(cs.length, 2);
    const retried = cs.find((s) => s.events.some((e) => e.name === "rpc.attempt.failed"));
    assert.ok(retried, "one of the two calls went to the dead provider first");
    assert.equal(retried.attributes["server.port"], port, "server.port names the provider that answered");
    assert.equal(retried.status.code, SpanStatusCode.UNSET);
  });
});
