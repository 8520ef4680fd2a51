import * as assert from "node:assert/strict";
import * as http from "node:http";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { connect, runs, ShopService, verify } from "../mcp/shop.js";
import { assertNearBaseline, Bystander, timedPost } from "./attack.js";

/**
 * Issue 39: the MCP endpoint (`createServer({ mcp })`) is JSON-RPC over POST, so what JSON-RPC
 * servers are hit with is tried here, each beside a well-behaved caller of another method:
 * batches far over the limit (and batches in a revision without them), floods of unknown methods
 * and of notifications, malformed JSON (truncated, nested a million deep, not UTF-8, not an
 * object), and a session id taken from another caller (there are no sessions: it buys nothing).
 * Each is answered at once with a JSON-RPC error naming the problem; no handler runs; the
 * bystander's calls keep succeeding.
 */

const CT = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const OLD = { ...CT, "mcp-protocol-version": "2025-03-26" };
const BOUNDED = { timeout: 20_000 };

function call(id: number, name = "greet", args: object = { name: "ann" }): object {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

/**
 * Sends `n` requests, `width` at a time over keep-alive HTTP/1.1 connections; resolves with the
 * count per status and the first few bodies seen (ids masked).
 */
async function flood(url: string, n: number, width: number, body: (i: number) => string, headers: Record<string, string> = CT) {
  const u = new URL("/mcp", url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: width });
  const statuses = new Map<number, number>();
  const bodies = new Set<string>();
  const one = (b: string) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers, agent }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => {
          statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
          if (bodies.size < 5) bodies.add(text.replace(/"id":\d+/, '"id":N'));
          resolve();
        });
      });
      req.on("error", reject);
      req.end(b);
    });
  let next = 0;
  const worker = async () => {
    while (next < n) await one(body(next++));
  };
  try {
    await Promise.all(Array.from({ length: width }, worker));
  } finally {
    agent.destroy();
  }
  return { statuses, bodies };
}

describe("hostile: JSON-RPC attacks on the MCP endpoint (issue 39)", () => {
  let server: TripleServer;
  let url: string;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new ShopService()], mcp: true, auth: { verify } });
    await server.listen({ port: 0, host: "127.0.0.1" });
    url = server.url;
  });
  after(() => server.close());

  it("a batch far over mcp.maxBatchSize, and a batch in a revision without batches: 400 at once, nothing runs", BOUNDED, async () => {
    const bystander = new Bystander(url);
    const before = runs.greet ?? 0;
    const huge = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => call(i)));
    const over = await timedPost(url, "/mcp", { headers: OLD, body: huge }, 5_000);
    assert.equal(over.reply.status, 400, over.reply.text().slice(0, 300));
    assert.deepEqual(over.reply.json(), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "a JSON-RPC batch of 20000 messages is over this server's limit of 16 (mcp.maxBatchSize)" },
    });
    const newer = await timedPost(url, "/mcp", { headers: { ...CT, "mcp-protocol-version": "2025-06-18" }, body: JSON.stringify([call(1), call(2)]) }, 5_000);
    assert.equal(newer.reply.status, 400);
    assert.match(newer.reply.json().error.message, /JSON-RPC batches are not part of MCP 2025-06-18 \(revision 2025-06-18 removed them\)/);
    const bad = await timedPost(url, "/mcp", { headers: OLD, body: JSON.stringify([call(1), { jsonrpc: "1.0", id: 2, method: "x" }]) }, 5_000);
    assert.equal(bad.reply.status, 400);
    assert.match(bad.reply.json().error.message, /needs "jsonrpc": "2.0"/);
    assert.equal(runs.greet ?? 0, before, "a refused batch ran a handler");
    // Within the limit, a 2025-03-26 batch is answered in order.
    const ok = await timedPost(
      url,
      "/mcp",
      { headers: OLD, body: JSON.stringify([call(1), { jsonrpc: "2.0", method: "notifications/initialized" }, call(2, "nope")]) },
      5_000,
    );
    const answers = ok.reply.json();
    assert.equal(answers.length, 2);
    assert.equal(answers[0].result.structuredContent.result, "hello ann");
    assert.equal(answers[1].error.code, -32602);
    await bystander.assertResponsive(2_000);
  });

  it("a flood of unknown methods: each a -32601 naming the methods there are", BOUNDED, async () => {
    const bystander = new Bystander(url);
    const { statuses, bodies } = await flood(url, 1_000, 8, (i) => JSON.stringify({ jsonrpc: "2.0", id: i, method: `resources/${"x".repeat(i % 50)}` }));
    assert.deepEqual([...statuses], [[200, 1_000]]);
    for (const b of bodies)
      assert.match(
        b,
        /"error":\{"code":-32601,"message":"method not found: \\"resources\/x*\\"; this server offers initialize, ping, tools\/list and tools\/call"\}/,
      );
    await bystander.assertResponsive(2_000);
  });

  it("a flood of notifications (one per request, and batches of them): 202, no body, no state kept", BOUNDED, async () => {
    const bystander = new Bystander(url);
    const rss = process.memoryUsage().rss;
    const one = await flood(url, 1_000, 8, () => JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1 } }));
    assert.deepEqual([...one.statuses], [[202, 1_000]]);
    assert.deepEqual([...one.bodies], [""]);
    const batch = JSON.stringify(
      Array.from({ length: 16 }, () => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } })),
    );
    const many = await flood(url, 300, 8, () => batch, OLD);
    assert.deepEqual([...many.statuses], [[202, 300]]);
    assert.ok(process.memoryUsage().rss - rss < 100 * 1024 * 1024, "the flood grew the RSS by over 100 MiB");
    await bystander.assertResponsive(2_000);
  });

  it("malformed JSON: truncated, nested a million deep, not UTF-8, not an object, over maxBodyBytes: a clear 4xx at once", BOUNDED, async () => {
    const bystander = new Bystander(url);
    const cases: [string | Buffer, number, number, RegExp][] = [
      ['{"jsonrpc":"2.0","id":1,"method":"tools/li', 400, -32700, /^parse error: invalid JSON: /],
      ["[".repeat(1_000_000), 400, -32700, /^parse error: invalid JSON: nested deeper than 100 levels$/],
      [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 400, -32700, /^parse error: invalid JSON/],
      ["42", 400, -32600, /^a JSON-RPC message must be an object$/],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', 400, -32600, /^a JSON-RPC id must be a string or a number$/],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}', 400, -32600, /^MCP params must be an object$/],
      [`{"jsonrpc":"2.0","id":1,"method":"ping","pad":"${"x".repeat(5 * 1024 * 1024)}"}`, 413, -32000, /exceeds the limit of 4194304 bytes|too large|4194304/],
    ];
    // Each answer is timed against a well-formed ping of the same size (4 MiB at most, the body
    // limit) sent right after: a refusal "at once" costs no more than reading as many bytes.
    const pingMs = async (bytes: number) => {
      const pad = "x".repeat(Math.max(0, Math.min(bytes, 4 * 1024 * 1024 - 100) - 50));
      const { reply, ms } = await timedPost(url, "/mcp", { headers: CT, body: `{"jsonrpc":"2.0","id":1,"method":"ping","pad":"${pad}"}` }, 5_000);
      assert.equal(reply.status, 200, reply.text().slice(0, 200));
      return ms;
    };
    for (const [body, status, code, message] of cases) {
      const { reply, ms } = await timedPost(url, "/mcp", { headers: CT, body }, 5_000);
      assert.equal(reply.status, status, `${String(body).slice(0, 40)}: ${reply.text().slice(0, 200)}`);
      const err = reply.json().error;
      assert.equal(err.code, code, reply.text().slice(0, 200));
      assert.match(err.message, message);
      assertNearBaseline(ms, Math.min(await pingMs(body.length), await pingMs(body.length)), 10, String(body).slice(0, 40));
    }
    // tools/call with a name or arguments of the wrong type: a JSON-RPC error, not a crash.
    for (const params of [{ name: 7 }, { name: "greet", arguments: [1, 2] }, { name: "x".repeat(100_000) }]) {
      const { reply } = await timedPost(url, "/mcp", { headers: CT, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }) }, 5_000);
      assert.equal(reply.status, 200);
      assert.equal(reply.json().error.code, -32602);
      assert.ok(reply.body.length < 1_000, `an answer of ${reply.body.length} bytes echoes the request`);
    }
    await bystander.assertResponsive(2_000);
  });

  it("another caller's session id buys nothing: there are no sessions, each request is authorized on its own", BOUNDED, async () => {
    const bystander = new Bystander(url);
    const admin = await connect(url, { token: "admin" });
    const names = (await admin.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes("ShopService_wipe"));
    const before = runs.wipe ?? 0;
    for (const sessionId of ["", "0", "someone-elses-session", "a".repeat(200)]) {
      const headers = sessionId ? { ...CT, "mcp-session-id": sessionId } : CT;
      const list = await timedPost(url, "/mcp", { headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }) }, 5_000);
      assert.equal(list.reply.status, 200);
      assert.equal(list.reply.headers["mcp-session-id"], undefined);
      assert.ok(!list.reply.text().includes("ShopService_wipe"), "a protected tool listed for an anonymous caller");
      const wipe = await timedPost(url, "/mcp", { headers, body: JSON.stringify(call(2, "ShopService_wipe", { what: "all" })) }, 5_000);
      assert.equal(wipe.reply.json().error.code, -32602);
    }
    assert.equal(runs.wipe ?? 0, before, "an anonymous caller ran a protected tool");
    await admin.close();
    await bystander.assertResponsive(2_000);
  });
});
