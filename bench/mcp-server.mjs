// The server of bench/mcp.mjs. MODE=ours (default): createServer({ mcp: true }) with one method,
// `bench.Shop/quote(sku, qty)`, an MCP tool (`quote`) and a Connect/Triple method on the same
// port. MODE=sdk: the official SDK's server (McpServer + StreamableHTTPServerTransport,
// stateless, JSON answers: a server and a transport per request, as the SDK requires when
// stateless) on node:http with the same tool. Prints "ready <port>" once listening.
import * as http from "node:http";
import { createRequire } from "node:module";
import * as path from "node:path";

const require = createRequire(import.meta.url);
const dist = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", process.env.DIST ?? "dist");
const port = Number(process.argv[2] ?? 0);

function quote(sku, qty) {
  return { sku, total: qty * 2.5, currency: "EUR" };
}

async function ours() {
  const { createServer, Field, Method, Service } = require(path.join(dist, "src", "index.js"));
  class Quote {}
  for (const [name, type] of [
    ["sku", String],
    ["total", Number],
    ["currency", String],
  ])
    Field({ type })(Quote.prototype, name);
  class Shop {
    quote(sku, qty) {
      return quote(sku, qty);
    }
  }
  const params = [
    { name: "sku", type: String },
    { name: "qty", type: Number },
  ];
  Method({ params, returns: Quote, mcp: { name: "quote" } })(Shop.prototype, "quote", Object.getOwnPropertyDescriptor(Shop.prototype, "quote"));
  Service("bench.Shop")(Shop);
  const server = createServer({ services: [new Shop()], mcp: true, health: false, reflection: false });
  await server.listen({ port, host: "127.0.0.1" });
  process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
  return new URL(server.url).port;
}

async function sdk() {
  const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
  const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
  const { z } = require("zod");
  const server = http.createServer(async (req, res) => {
    const mcp = new McpServer({ name: "bench", version: "1.0.0" });
    mcp.registerTool(
      "quote",
      { inputSchema: { sku: z.string(), qty: z.number() }, outputSchema: { sku: z.string(), total: z.number(), currency: z.string() } },
      async ({ sku, qty }) => {
        const q = quote(sku, qty);
        return { content: [{ type: "text", text: JSON.stringify(q) }], structuredContent: q };
      },
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
  return server.address().port;
}

const bound = process.env.MODE === "sdk" ? await sdk() : await ours();
console.log(`ready ${bound}`);
