import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createServer, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { createSdk, registerGlobally, waitForSpans } from "../observability/sdk.js";
import { ShopService } from "./shop.js";

const sdk = createSdk();
registerGlobally(sdk);

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

describe("MCP tool calls in OpenTelemetry", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new ShopService()], mcp: true, logger: { info() {}, warn() {}, error() {} } });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  const call = (args: object) =>
    post1(server.url, "/mcp", {
      headers: { "content-type": "application/json", traceparent: `00-${TRACE}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "greet", arguments: args } }),
    });

  it("a server span per tool call: rpc.system.name mcp, the method, its status; the caller's trace context is honoured", async () => {
    sdk.spans.reset();
    assert.equal((await call({ name: "ann" })).status, 200);
    const bad = await call({ name: "A" });
    assert.equal(bad.json().result.isError, true);
    const spans = await waitForSpans(sdk, 2, (s: ReadableSpan) => s.kind === SpanKind.SERVER);
    for (const s of spans) {
      assert.equal(s.attributes["rpc.system.name"], "mcp");
      assert.equal(s.attributes["rpc.method"], "shop.ShopService/greet");
      assert.equal(s.spanContext().traceId, TRACE);
    }
    assert.deepEqual(
      spans.map((s) => s.attributes["rpc.status_code"]),
      ["OK", "INVALID_ARGUMENT"],
    );
  });
});
