#!/usr/bin/env node
// MCP cost in process (issue 39), no sockets: the same method called N times through
// createFetchHandler as an MCP tools/call and as a Connect JSON call, alternating rounds; prints
// the CPU time per call (process.cpuUsage) of each and the ratio. SDK=1 adds the official SDK's
// stateless server side (WebStandardStreamableHTTPServerTransport, a server and a transport per
// request) handling the same tools/call Request.
//
//   npm run build && node bench/mcp-micro.mjs        # 3 rounds of 5,000 calls
//   N=20000 ROUNDS=5 SDK=1 node bench/mcp-micro.mjs
import { createRequire } from "node:module";
import * as path from "node:path";

const require = createRequire(import.meta.url);
const dist = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", process.env.DIST ?? "dist");
const { createFetchHandler, Field, Method, Service } = require(path.join(dist, "src", "index.js"));
const N = Number(process.env.N ?? 5000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);

class Quote {}
for (const [name, type] of [
  ["sku", String],
  ["total", Number],
  ["currency", String],
])
  Field({ type })(Quote.prototype, name);
class Shop {
  quote(sku, qty) {
    return { sku, total: qty * 2.5, currency: "EUR" };
  }
}
Method({
  params: [
    { name: "sku", type: String },
    { name: "qty", type: Number },
  ],
  returns: Quote,
  mcp: { name: "quote" },
})(Shop.prototype, "quote", Object.getOwnPropertyDescriptor(Shop.prototype, "quote"));
Service("bench.Shop")(Shop);
const handler = createFetchHandler({ services: [new Shop()], mcp: true, health: false, reflection: false });

const ARGS = { sku: "AB-12", qty: 4 };
const forms = {
  connect: () =>
    new Request("http://localhost/bench.Shop/quote", {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: JSON.stringify(ARGS),
    }),
  mcp: () =>
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "quote", arguments: ARGS } }),
    }),
};
const handlers = { connect: handler, mcp: handler };

if (process.env.SDK) {
  const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
  const { WebStandardStreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js");
  const { z } = require("zod");
  handlers.sdk = async (req) => {
    const server = new McpServer({ name: "bench", version: "1.0.0" });
    server.registerTool(
      "quote",
      { inputSchema: { sku: z.string(), qty: z.number() }, outputSchema: { sku: z.string(), total: z.number(), currency: z.string() } },
      async ({ sku, qty }) => {
        const q = { sku, total: qty * 2.5, currency: "EUR" };
        return { content: [{ type: "text", text: JSON.stringify(q) }], structuredContent: q };
      },
    );
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    const res = await transport.handleRequest(req);
    const text = await res.text();
    await server.close();
    return new Response(text, { status: res.status });
  };
  forms.sdk = forms.mcp;
}

async function round(kind, n) {
  const h = handlers[kind];
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const r = await h(forms[kind]());
    if (r.status !== 200) throw new Error(`${kind}: ${r.status} ${await r.text()}`);
    await r.text();
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

for (const k of Object.keys(handlers)) await round(k, Math.min(N, 500));
const best = Object.fromEntries(Object.keys(handlers).map((k) => [k, Number.POSITIVE_INFINITY]));
for (let r = 1; r <= ROUNDS; r++) {
  for (const k of Object.keys(handlers)) {
    const us = await round(k, k === "sdk" ? Math.ceil(N / 10) : N);
    best[k] = Math.min(best[k], us);
    console.log(`round ${r}: ${k.padEnd(8)} ${us.toFixed(1).padStart(8)} µs CPU per call`);
  }
}
console.log(`best: Connect ${best.connect.toFixed(1)} µs, MCP ${best.mcp.toFixed(1)} µs, MCP/Connect ${(best.mcp / best.connect).toFixed(3)}`);
if (best.sdk !== undefined) console.log(`official SDK server side: ${best.sdk.toFixed(1)} µs, ${(best.sdk / best.mcp).toFixed(1)}× ours`);
await handler.close();
