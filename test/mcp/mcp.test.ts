import express from "express";
import Fastify from "fastify";
import * as assert from "node:assert/strict";
import type * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  createFetchHandler,
  createServer,
  expressTripleMiddleware,
  Field,
  fastifyTriplePlugin,
  type Interceptor,
  Method,
  Param,
  Service,
  ServerStream,
  type TripleServer,
} from "../../src/index.js";
import { GREET_PROTO, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { post1, post2 } from "../helpers/http.js";
import { CatalogService, connect, runs, type Seen, ShopService, textOf, verify } from "./shop.js";

const QUIET = { info() {}, warn() {}, error() {}, debug() {} };

/** Every tool an anonymous caller sees: the opted-in methods without auth. */
const PUBLIC_TOOLS = ["CatalogService_list", "ShopService_boom", "ShopService_price", "ShopService_refuse", "ShopService_slow", "greet"];

interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

async function tools(client: Client): Promise<Map<string, Tool>> {
  const list = await client.listTools();
  return new Map(list.tools.map((t) => [t.name, t as Tool]));
}

describe("MCP tools with the official SDK client over streamable HTTP", () => {
  let server: TripleServer;
  let url: string;
  const protocols: string[] = [];
  const accessLines: Record<string, unknown>[] = [];
  const recorder: Interceptor = (next) => async (call) => {
    protocols.push(`${call.context.protocol} ${call.method.path}`);
    return next(call);
  };
  const clients: Client[] = [];
  const open = async (opts: Parameters<typeof connect>[1] = {}) => {
    const c = await connect(url, opts);
    clients.push(c);
    return c;
  };

  before(async () => {
    server = createServer({
      services: [new ShopService(), new CatalogService()],
      mcp: { timeoutMs: 500, name: "shop", version: "2.0.0", instructions: "Price before you buy." },
      auth: { verify },
      interceptors: [recorder],
      maskUnexpectedErrors: true,
      logger: QUIET,
      accessLog: { info: (fields: Record<string, unknown>) => accessLines.push(fields), warn() {}, error() {} },
    });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(async () => {
    for (const c of clients) await c.close();
    await server.close();
  });

  for (const revision of ["2025-11-25", "2025-06-18", "2025-03-26"]) {
    it(`revision ${revision}: initialize, tools/list, tools/call`, async () => {
      const seen: Seen = { versions: [] };
      const client = await open({ revision, seen });
      assert.deepEqual(client.getServerVersion(), { name: "shop", version: "2.0.0" });
      assert.equal(client.getInstructions(), "Price before you buy.");
      const list = await tools(client);
      assert.deepEqual([...list.keys()].sort(), PUBLIC_TOOLS);
      const r = await client.callTool({ name: "ShopService_price", arguments: { sku: "AB-1", qty: 4 } });
      assert.deepEqual(r.structuredContent, { total: 10, currency: "EUR" });
      assert.deepEqual(JSON.parse(textOf(r)), { total: 10, currency: "EUR" });
      assert.equal(r.isError, undefined);
      // After initialize every request carries the revision the server answered with.
      assert.equal(seen.versions[0], null);
      assert.ok(
        seen.versions.slice(1).every((v) => v === revision),
        JSON.stringify(seen.versions),
      );
    });
  }

  it("tool definitions: the method's JSON Schema, output schema, annotations, title and description", async () => {
    const list = await tools(await open({ token: "admin" }));
    const price = list.get("ShopService_price")!;
    assert.equal(price.description, "Prices an order line");
    assert.deepEqual(price.inputSchema, {
      type: "object",
      properties: {
        sku: { type: "string", description: "the article number", minLength: 2, pattern: "^[A-Z0-9-]+$" },
        qty: { type: "number", format: "double", minimum: 1, maximum: 10 },
      },
      required: ["sku", "qty"],
    });
    assert.deepEqual(price.outputSchema, {
      type: "object",
      properties: { total: { type: "number", format: "double" }, currency: { type: "string" } },
      required: ["total", "currency"],
    });
    assert.deepEqual(price.annotations, { readOnlyHint: false });
    const greet = list.get("greet")!;
    assert.equal(greet.title, "Greeting");
    assert.equal(greet.inputSchema.additionalProperties, false);
    assert.deepEqual(greet.inputSchema.required, ["name"]);
    assert.deepEqual(greet.outputSchema, { type: "object", properties: { result: { type: "string" } }, required: ["result"] });
    assert.deepEqual(greet.annotations, { title: "Greeting", readOnlyHint: true, idempotentHint: true });
    assert.deepEqual(list.get("ShopService_wipe")!.annotations, { readOnlyHint: false, destructiveHint: true });
    assert.equal(list.get("ShopService_boom")!.outputSchema, undefined);
    const catalog = await (await open()).callTool({ name: "CatalogService_list", arguments: { prefix: "a" } });
    assert.deepEqual(catalog.structuredContent, { result: ["apple", "avocado"] });
  });

  it("a validation failure is an isError result naming every violation; the handler does not run", async () => {
    const client = await open();
    const before = runs.price ?? 0;
    const r = await client.callTool({ name: "ShopService_price", arguments: { sku: "a", qty: 40 } });
    assert.equal(r.isError, true);
    const text = textOf(r);
    assert.match(text, /^invalid_argument: the arguments break 3 rules, so the tool did not run:/);
    assert.match(text, /\n- sku: must be at least 2 characters long/);
    assert.match(text, /\n- sku: must match \^\[A-Z0-9-\]\+\$/);
    assert.match(text, /\n- qty: must be at most 10/);
    const g = await client.callTool({ name: "greet", arguments: { name: "Al", times: 9 } });
    assert.equal(g.isError, true);
    assert.match(textOf(g), /- name: must be at least 3 characters long\n- name: must match \^\[a-z\]\+\$\n- times: must be at most 3/);
    const unknown = await client.callTool({ name: "greet", arguments: { name: "ann", shout: true } });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /^invalid_argument: unknown argument "shout": the tool takes name, times$/);
    const missing = await client.callTool({ name: "greet", arguments: {} });
    assert.match(textOf(missing), /^invalid_argument: missing argument name$/);
    const wrongType = await client.callTool({ name: "ShopService_price", arguments: { sku: "AB", qty: "many" } });
    assert.equal(wrongType.isError, true);
    assert.match(textOf(wrongType), /^invalid_argument: [\s\S]*- qty: must be a finite number/);
    assert.equal(runs.price ?? 0, before, "the handler ran on invalid arguments");
    assert.equal(textOf(await client.callTool({ name: "greet", arguments: { name: "ann", times: 2 } })), '"hello annhello ann"');
  });

  it("handler errors: an unexpected one is masked as every protocol masks it, an RpcError keeps its code and message", async () => {
    const client = await open();
    const boom = await client.callTool({ name: "ShopService_boom", arguments: {} });
    assert.equal(boom.isError, true);
    assert.match(textOf(boom), /^unknown: internal error \(id [0-9a-f]{8}\)$/);
    assert.doesNotMatch(JSON.stringify(boom), /hunter2/);
    const refused = await client.callTool({ name: "ShopService_refuse" });
    assert.equal(refused.isError, true);
    assert.equal(textOf(refused), "failed_precondition: the shop is closed on Sundays");
  });

  it("auth: a tool the caller may not call is neither listed nor callable; the role holder lists and calls it", async () => {
    const before = runs.wipe ?? 0;
    for (const token of [undefined, "user"]) {
      const client = await open({ token });
      assert.ok(!(await tools(client)).has("ShopService_wipe"), `listed for ${token}`);
      await assert.rejects(client.callTool({ name: "ShopService_wipe", arguments: { what: "all" } }), (e: Error & { code?: number }) => {
        assert.equal(e.code, -32602);
        assert.match(e.message, /unknown tool "ShopService_wipe": tools\/list names the tools this caller may call/);
        return true;
      });
    }
    assert.equal(runs.wipe ?? 0, before, "an unauthorized caller ran the handler");
    const admin = await open({ token: "admin" });
    assert.deepEqual([...(await tools(admin)).keys()].sort(), [...PUBLIC_TOOLS, "ShopService_wipe"].sort());
    assert.equal(textOf(await admin.callTool({ name: "ShopService_wipe", arguments: { what: "all" } })), '"wiped all"');
  });

  it("auth: a token the verifier refuses is answered 401 with WWW-Authenticate", async () => {
    const client = await open({ token: "forged" });
    await assert.rejects(client.listTools(), /401|invalid bearer token/);
    const r = await post1(url, "/mcp", {
      headers: { "content-type": "application/json", authorization: "Bearer forged" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ShopService_wipe", arguments: { what: "x" } } }),
    });
    assert.equal(r.status, 401);
    assert.equal(r.headers["www-authenticate"], 'Bearer realm="triple-rpc"');
    assert.deepEqual(r.json(), { jsonrpc: "2.0", id: null, error: { code: -32000, message: "invalid bearer token" } });
  });

  it("methods that did not opt in are absent and not callable (closed by default)", async () => {
    const client = await open({ token: "admin" });
    const list = await tools(client);
    for (const name of ["ShopService_internal", "CatalogService_secret", "CatalogService_watch"]) {
      assert.ok(!list.has(name), name);
      await assert.rejects(client.callTool({ name, arguments: {} }), /unknown tool/);
    }
    assert.equal(runs.internal, undefined);
  });

  it("interceptors see the call with protocol mcp; the access log records it", async () => {
    protocols.length = 0;
    const n = accessLines.length;
    await (await open()).callTool({ name: "greet", arguments: { name: "ann" } });
    assert.deepEqual(protocols, ["mcp /shop.ShopService/greet"]);
    for (let i = 0; i < 50 && accessLines.length === n; i++) await new Promise((r) => setTimeout(r, 10));
    // The SDK client also tries a GET for a server stream, refused 405 (logged as refused).
    const line = accessLines.find((l, i) => i >= n && l.path === "/mcp" && l.method === "POST");
    assert.ok(line, JSON.stringify(accessLines.slice(n)));
    assert.equal(line.protocol, "mcp");
    assert.equal(line.code, "ok");
  });

  it("the deadline (mcp.timeoutMs) ends a slow tool: deadline_exceeded, the handler's signal fired", async () => {
    const client = await open();
    const t = performance.now();
    const r = await client.callTool({ name: "ShopService_slow", arguments: { ms: 5_000 } });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /^deadline_exceeded: .*500 ms/);
    // Before the tool's own 5 s (less a margin): the 500 ms deadline ended it (one-sided, generous).
    assert.ok(performance.now() - t < 4_900, `ended after ${Math.round(performance.now() - t)} ms`);
    assert.equal(textOf(await client.callTool({ name: "ShopService_slow", arguments: { ms: 1 } })), '"done"');
  });
});

describe("MCP registration and options", () => {
  it("a streaming method that opts in is refused at registration, naming why", () => {
    @Service("mcp.Streams")
    class Streams {
      @ServerStream()
      @Method({ mcp: true })
      async *ticks(@Param("n") n: number): AsyncGenerator<number> {
        yield n;
      }
    }
    assert.throws(
      () => createServer({ services: [new Streams()], mcp: true, logger: QUIET }),
      /ticks is server-streaming: only unary methods can be MCP tools/,
    );
  });

  it("unnamed parameters, a taken tool name and a bad tool name are TypeErrors naming the fix", () => {
    @Service("mcp.Unnamed")
    class Unnamed {
      @Method({ mcp: true })
      add(a: number, b: number): number {
        return a + b;
      }
    }
    assert.throws(
      () => createServer({ services: [new Unnamed()], mcp: true, logger: QUIET }),
      (e: Error) => e instanceof TypeError && /name every parameter/.test(e.message),
    );
    // Without mcp on the server, nothing is a tool and nothing is checked.
    assert.doesNotThrow(() => createServer({ services: [new Unnamed()], logger: QUIET }));
    @Service("mcp.One")
    class One {
      @Method({ mcp: { name: "same" } })
      a(): void {}
    }
    @Service("mcp.Two")
    class Two {
      @Method({ mcp: { name: "same" } })
      b(): void {}
    }
    assert.throws(
      () => createServer({ services: [new One(), new Two()], mcp: true, logger: QUIET }),
      /MCP tool name "same" is taken by \/mcp.One\/a; give \/mcp.Two\/b another/,
    );
    @Service("mcp.BadName")
    class BadName {
      @Method({ mcp: { name: "has space" } })
      a(): void {}
    }
    assert.throws(() => createServer({ services: [new BadName()], mcp: true, logger: QUIET }), /MCP tool name "has space" must be 1 to 64 of/);
  });

  it("a .proto-bound service: ProtoJSON objects in and out; nested and self-referencing classes in $defs", async () => {
    @Service("greet.GreetService", { proto: GREET_PROTO, mcp: true })
    class McpGreet extends GreetServiceImpl {}
    class Node {
      @Field() label!: string;
      @Field({ type: [Node], optional: true }) children?: Node[];
    }
    @Service("mcp.Trees")
    class Trees {
      @Method({ mcp: true, returns: [Node] })
      grow(@Param({ name: "root", type: Node }) root: Node): Node[] {
        return [root];
      }
    }
    const server = createServer({ services: [new McpGreet(), new Trees()], mcp: true, logger: QUIET });
    await server.listen({ port: 0 });
    try {
      const client = await connect(server.url);
      const list = await tools(client);
      // Streaming rpcs of the .proto are skipped by the service-level opt-in.
      assert.deepEqual([...list.keys()].filter((n) => n.startsWith("GreetService_")).sort(), [
        "GreetService_Greet",
        "GreetService_GreetCached",
        "GreetService_GreetSlowly",
        "GreetService_GreetWithDetails",
      ]);
      assert.deepEqual(list.get("GreetService_Greet")!.inputSchema, { type: "object", description: "ProtoJSON of greet.GreetRequest" });
      const r = await client.callTool({ name: "GreetService_Greet", arguments: { name: "triple" } });
      assert.deepEqual(r.structuredContent, { greeting: "triple" });
      const grow = list.get("Trees_grow")!;
      assert.deepEqual(grow.inputSchema.properties, { root: { $ref: "#/$defs/Node" } });
      assert.deepEqual((grow.inputSchema.$defs as Record<string, unknown>).Node, {
        type: "object",
        properties: { label: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } },
        required: ["label"],
      });
      const tree = { label: "a", children: [{ label: "b" }] };
      assert.deepEqual((await client.callTool({ name: "Trees_grow", arguments: { root: tree } })).structuredContent, { result: [tree] });
      await client.close();
    } finally {
      await server.close();
    }
  });

  it("bad options are TypeErrors naming the option", () => {
    const cases: [unknown, RegExp][] = [
      [{ path: "mcp" }, /createServer\(\{ mcp \}\): path must start with "\/"/],
      [{ timeoutMs: -1 }, /timeoutMs must be a whole number of milliseconds/],
      [{ maxBatchSize: 0 }, /maxBatchSize must be a whole number from 1 to 1000/],
      [{ allowedOrigins: "https://a.example" }, /allowedOrigins must be an array of non-empty strings/],
      [{ pth: "/x" }, /unknown option "pth"/],
      ["yes", /expected true or an options object/],
    ];
    for (const [mcp, re] of cases)
      assert.throws(
        () => createServer({ mcp: mcp as never, logger: QUIET }),
        (e: Error) => e instanceof TypeError && re.test(e.message),
        String(re),
      );
  });

  it("shutdown: a tool call still running when shutdownTimeoutMs passes gets 503 and a JSON-RPC error; its signal fires", async () => {
    const server = createServer({ services: [new ShopService()], mcp: true, shutdownTimeoutMs: 100, logger: QUIET });
    await server.listen({ port: 0 });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ShopService_slow", arguments: { ms: 3_000 } } });
    const pending = post1(server.url, "/mcp", { headers: { "content-type": "application/json" }, body });
    for (let i = 0; i < 100 && server.inflightCount === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.inflightCount, 1);
    await server.close();
    const r = await pending;
    assert.equal(r.status, 503);
    assert.deepEqual(r.json(), { jsonrpc: "2.0", id: null, error: { code: -32000, message: "the server shut down before the call finished" } });
  });

  it("tools/list verifies a refused token once, not once per protected tool; a good one once per protected tool", async () => {
    @Service("mcp.Vault", { mcp: true, auth: true })
    class Vault {
      @Method()
      a(): void {}
      @Method()
      b(): void {}
      @Method()
      c(): void {}
      @Method({ auth: false })
      open(): void {}
    }
    let verified = 0;
    const server = createServer({
      services: [new Vault()],
      mcp: true,
      auth: {
        verify: (t) => {
          verified++;
          return verify(t);
        },
      },
      logger: QUIET,
    });
    await server.listen({ port: 0 });
    try {
      const list = (token: string) =>
        post1(server.url, "/mcp", {
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
      assert.equal((await list("forged")).status, 401);
      assert.equal(verified, 1);
      verified = 0;
      const ok = await list("user");
      assert.deepEqual(
        ok.json().result.tools.map((t: { name: string }) => t.name),
        ["Vault_a", "Vault_b", "Vault_c", "Vault_open"],
      );
      assert.equal(verified, 3);
    } finally {
      await server.close();
    }
  });

  it("unregister takes a service's tools away", async () => {
    const shop = new ShopService();
    const server = createServer({ services: [shop], mcp: true, logger: QUIET });
    await server.listen({ port: 0 });
    try {
      const client = await connect(server.url);
      assert.ok((await tools(client)).has("greet"));
      server.unregister(shop);
      assert.equal((await tools(client)).size, 0);
      await client.close();
    } finally {
      await server.close();
    }
  });
});

describe("the MCP endpoint's HTTP rules", () => {
  let server: TripleServer;
  let url: string;
  let port: number;
  const INIT = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
  const post = (headers: Record<string, string>, body = INIT) => post1(url, "/mcp", { headers: { "content-type": "application/json", ...headers }, body });
  before(async () => {
    server = createServer({ services: [new ShopService()], mcp: { allowedOrigins: ["https://app.example"], allowedHosts: ["shop.internal"] }, logger: QUIET });
    port = (await server.listen({ port: 0 })).port;
    url = server.url;
  });
  after(() => server.close());

  it("DNS rebinding: on a loopback bind, a Host other than localhost, the bound address or mcp.allowedHosts is refused", async () => {
    const r = await post({ host: `rebind.attacker.example:${port}` });
    assert.equal(r.status, 403);
    assert.match(r.json().error.message, /^Host "rebind.attacker.example:\d+" is not allowed: the server listens on loopback/);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `shop.internal:${port}`, "LOCALHOST"]) {
      const ok = await post({ host });
      assert.equal(ok.status, 200, `${host}: ${ok.text()}`);
      assert.deepEqual(ok.json(), { jsonrpc: "2.0", id: 1, result: {} });
    }
    // HTTP/2 names the host in :authority.
    const session = http2.connect(url);
    try {
      for (const [authority, status] of [
        ["rebind.attacker.example", 403],
        [`localhost:${port}`, 200],
      ] as const) {
        const got = await new Promise<number>((resolve, reject) => {
          const req = session.request({ ":method": "POST", ":path": "/mcp", ":authority": authority, "content-type": "application/json" });
          req.on("response", (h) => resolve(Number(h[":status"])));
          req.on("error", reject);
          req.resume();
          req.end(INIT);
        });
        assert.equal(got, status, authority);
      }
    } finally {
      session.close();
    }
  });

  it("Origin: only mcp.allowedOrigins (without cors); callers without Origin pass", async () => {
    const bad = await post({ origin: "https://evil.example" });
    assert.equal(bad.status, 403);
    assert.match(bad.json().error.message, /origin "https:\/\/evil.example" is not allowed to call the MCP endpoint: list it in mcp.allowedOrigins/);
    assert.equal((await post({ origin: "https://app.example" })).status, 200);
  });

  it("with cors configured, its origins decide: a preflight for the MCP headers, the CORS headers on the answer, others 403", async () => {
    const withCors = createServer({ services: [new ShopService()], mcp: true, cors: { origins: ["https://agent.example"] }, logger: QUIET });
    await withCors.listen({ port: 0 });
    try {
      const pre = await fetch(`${withCors.url}/mcp`, {
        method: "OPTIONS",
        headers: {
          origin: "https://agent.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, mcp-protocol-version, authorization",
        },
      });
      assert.equal(pre.status, 204);
      const r = await post1(withCors.url, "/mcp", { headers: { "content-type": "application/json", origin: "https://agent.example" }, body: INIT });
      assert.equal(r.status, 200);
      assert.equal(r.headers["access-control-allow-origin"], "https://agent.example");
      const other = await post1(withCors.url, "/mcp", { headers: { "content-type": "application/json", origin: "https://evil.example" }, body: INIT });
      assert.equal(other.status, 403);
    } finally {
      await withCors.close();
    }
  });

  it("GET and DELETE: 405 (stateless: no SSE stream, no session); wrong media types 415 / 406; unknown revision 400", async () => {
    for (const method of ["GET", "DELETE"]) {
      const r = await fetch(`${url}/mcp`, { method, headers: { accept: "text/event-stream" } });
      assert.equal(r.status, 405);
      assert.equal(r.headers.get("allow"), "POST");
      assert.match(((await r.json()) as { error: { message: string } }).error.message, /stateless/);
    }
    assert.equal((await post({ "content-type": "text/plain" })).status, 415);
    assert.equal((await post({ accept: "text/html" })).status, 406);
    const v = await post({ "mcp-protocol-version": "1999-01-01" });
    assert.equal(v.status, 400);
    assert.match(v.json().error.message, /unsupported MCP-Protocol-Version "1999-01-01": this server speaks 2025-11-25, 2025-06-18, 2025-03-26/);
  });

  it("over HTTP/2 (h2c) as over HTTP/1.1", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "greet", arguments: { name: "ann" } } });
    const r = await post2(url, "/mcp", { headers: { "content-type": "application/json" }, body });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), {
      jsonrpc: "2.0",
      id: "a",
      result: { content: [{ type: "text", text: '"hello ann"' }], structuredContent: { result: "hello ann" } },
    });
  });

  it("a notification is taken with 202 and no body; a session id is ignored (there are no sessions)", async () => {
    const r = await post({ "mcp-session-id": "someone-elses" }, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    assert.equal(r.status, 202);
    assert.equal(r.body.length, 0);
    const ping = await post({ "mcp-session-id": "someone-elses" });
    assert.equal(ping.headers["mcp-session-id"], undefined);
  });
});

describe("MCP through the adapters", () => {
  it("Express middleware: the SDK client lists and calls", async () => {
    const app = express();
    const rpc = expressTripleMiddleware({ services: [new ShopService()], mcp: true, logger: QUIET });
    app.use(rpc);
    const srv: http.Server = await new Promise((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const client = await connect(`http://127.0.0.1:${(srv.address() as AddressInfo).port}`);
      assert.ok((await tools(client)).has("greet"));
      assert.equal(textOf(await client.callTool({ name: "greet", arguments: { name: "ann" } })), '"hello ann"');
      await client.close();
    } finally {
      await rpc.close();
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
    }
  });

  it("Fastify plugin: the SDK client lists and calls", async () => {
    const app = Fastify();
    await app.register(fastifyTriplePlugin, { services: [new ShopService()], mcp: true, logger: QUIET } as never);
    await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const client = await connect(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
      assert.equal(textOf(await client.callTool({ name: "greet", arguments: { name: "ann" } })), '"hello ann"');
      await client.close();
    } finally {
      await app.close();
    }
  });

  it("fetch handler: tools/call as a Request", async () => {
    const handler = createFetchHandler({ services: [new ShopService()], mcp: true, logger: QUIET });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "greet", arguments: { name: "ann", times: 2 } } });
    const r = await handler(
      new Request("http://localhost/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body,
      }),
    );
    assert.equal(r.status, 200);
    const json = (await r.json()) as { result: { structuredContent: unknown } };
    assert.deepEqual(json.result.structuredContent, { result: "hello annhello ann" });
    await handler.close();
  });
});
