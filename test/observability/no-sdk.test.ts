import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { context, trace } from "@opentelemetry/api";
import { CallContext, closeClient, createClient, createServer, Ctx, Method, Param, Service, type TripleServer } from "../../src/index.js";

/** What a handler sees of telemetry when no SDK is registered. */
@Service("otel.Bare")
class Bare {
  @Method()
  async look(@Param() x: number, @Ctx() ctx: CallContext): Promise<{ x: number; traceparent: boolean; observed: boolean; span: boolean }> {
    return {
      x,
      traceparent: ctx.requestHeaders.get("traceparent") !== undefined,
      observed: (ctx as unknown as { observer: unknown }).observer !== undefined,
      span: trace.getSpan(context.active()) !== undefined,
    };
  }
}

describe("no OpenTelemetry SDK registered", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new Bare()] });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  for (const o of [{ protocol: "grpc" as const }, { httpVersion: "1.1" as const }, { httpVersion: "2" as const }]) {
    it(`${JSON.stringify(o)}: calls work, nothing is observed, no trace header is sent`, async () => {
      const c = createClient(Bare, { providers: [server.url], ...o });
      try {
        for (let i = 0; i < 3; i++) {
          assert.deepEqual(await c.look(i), { x: i, traceparent: false, observed: false, span: false });
        }
      } finally {
        closeClient(c);
      }
    });
  }

  it("telemetry: { enabled: false } keeps a server unobserved even with a provider given", async () => {
    const { BasicTracerProvider } = await import("@opentelemetry/sdk-trace-base");
    const off = createServer({ services: [new Bare()], telemetry: { enabled: false, tracerProvider: new BasicTracerProvider() } });
    await off.listen({ port: 0 });
    const c = createClient(Bare, { providers: [off.url] });
    try {
      assert.equal((await c.look(1)).observed, false);
    } finally {
      closeClient(c);
      await off.close();
    }
  });
});
