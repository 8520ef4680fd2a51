import { createClient as createConnectClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as assert from "node:assert/strict";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { after, before, describe, it } from "node:test";
import { GREET_CACHE_CONTROL, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import {
  type CallContext,
  closeClient,
  createClient,
  createFetchHandler,
  Ctx,
  type FetchHandler,
  Param,
  RpcError,
  ServerStream,
  Service,
} from "../../src/index.js";
import { greetDescriptors } from "../connect/greet-descriptors.js";
import { SecretService, ThingService, TOKEN } from "./mounted.js";

const BASE = "http://fetch.test";

/** A stream that ticks until the call is aborted, and says when it was. */
@Service("adapters.Ticker")
class Ticker {
  static aborted: (() => void) | undefined;
  @ServerStream()
  async *tick(@Param() _n: number, @Ctx() ctx: CallContext): AsyncGenerator<number> {
    ctx.signal.addEventListener("abort", () => Ticker.aborted?.());
    for (let i = 0; !ctx.signal.aborted; i++) {
      yield i;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}
const JSON_CT = { "content-type": "application/json" };

/**
 * A bare fetch-style server over node:http, as Bun.serve or Deno.serve are: each request becomes
 * a `Request`, the handler's `Response` is written back (streamed).
 */
function fetchServer(handler: (r: Request) => Promise<Response>): http.Server {
  return http.createServer(async (req, res) => {
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as unknown as ReadableStream) : undefined,
      signal: abort.signal,
      duplex: "half",
    } as RequestInit);
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return void res.end();
    Readable.fromWeb(response.body as unknown as NodeReadableStream).pipe(res);
  });
}

describe("createFetchHandler under Node's own Request / Response", () => {
  let handler: FetchHandler;
  before(() => {
    handler = createFetchHandler({
      services: [new GreetServiceImpl(), new SecretService()],
      limits: { maxBodyBytes: 1024 },
      auth: { verify: (t) => (t === TOKEN ? { subject: "t" } : null) },
      logger: { info() {}, warn() {}, error() {}, debug() {} } as never,
    });
  });
  after(() => handler.close());

  it("unary: Triple HTTP JSON", async () => {
    const r = await handler(new Request(`${BASE}/greet.GreetService/Greet`, { method: "POST", headers: JSON_CT, body: '{"name":"triple"}' }));
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /application\/json/);
    assert.deepEqual(await r.json(), { greeting: "triple" });
  });

  it("unary: Connect JSON", async () => {
    const r = await handler(
      new Request(`${BASE}/greet.GreetService/Greet`, { method: "POST", headers: { ...JSON_CT, "connect-protocol-version": "1" }, body: '{"name":"triple"}' }),
    );
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { greeting: "triple" });
  });

  it("GET: Connect's query form of an idempotent method, with its Cache-Control", async () => {
    const message = encodeURIComponent(JSON.stringify({ name: "g" }));
    const r = await handler(new Request(`${BASE}/greet.GreetService/GreetCached?connect=v1&encoding=json&message=${message}`));
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("cache-control"), GREET_CACHE_CONTROL);
    assert.deepEqual(await r.json(), { greeting: "hello, g" });
  });

  it("server stream: Connect streaming JSON, enveloped messages then the end-of-stream", async () => {
    const body = Buffer.from('{"name":"s"}');
    const env = Buffer.alloc(5 + body.length);
    env.writeUInt32BE(body.length, 1);
    body.copy(env, 5);
    const r = await handler(
      new Request(`${BASE}/greet.GreetService/GreetServerStream`, { method: "POST", headers: { "content-type": "application/connect+json" }, body: env }),
    );
    assert.equal(r.status, 200);
    const bytes = Buffer.from(await r.arrayBuffer());
    const frames: { flags: number; json: any }[] = [];
    for (let i = 0; i < bytes.length; ) {
      const len = bytes.readUInt32BE(i + 1);
      frames.push({ flags: bytes[i], json: JSON.parse(bytes.subarray(i + 5, i + 5 + len).toString()) });
      i += 5 + len;
    }
    assert.deepEqual(
      frames.filter((f) => f.flags === 0).map((f) => f.json.greeting),
      ["hello, s (1/3)", "hello, s (2/3)", "hello, s (3/3)"],
    );
    assert.equal(frames.at(-1)?.flags, 2);
  });

  it("SSE: a server stream called with plain JSON", async () => {
    const r = await handler(new Request(`${BASE}/greet.GreetService/GreetServerStream`, { method: "POST", headers: JSON_CT, body: '{"name":"e"}' }));
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
    assert.equal((await r.text()).match(/^data: /gm)?.length, 3);
  });

  it("errors: the handler's, unknown path 404, body limit 413, auth 401, gRPC refused with its reason", async () => {
    const bad = await handler(new Request(`${BASE}/greet.GreetService/Greet`, { method: "POST", headers: JSON_CT, body: '{"name":"x"}' }));
    assert.equal(bad.status, 500);
    assert.match(await bad.text(), /name is not right: x/);
    const none = await handler(new Request(`${BASE}/nope.Nope/Nothing`, { method: "POST", headers: JSON_CT, body: "{}" }));
    assert.equal(none.status, 404);
    const big = await handler(
      new Request(`${BASE}/greet.GreetService/Greet`, { method: "POST", headers: JSON_CT, body: JSON.stringify({ name: "x".repeat(4096) }) }),
    );
    assert.equal(big.status, 413);
    const denied = await handler(new Request(`${BASE}/adapters.Secret/whisper`, { method: "POST", headers: JSON_CT, body: '["a"]' }));
    assert.equal(denied.status, 401);
    const allowed = await handler(
      new Request(`${BASE}/adapters.Secret/whisper`, { method: "POST", headers: { ...JSON_CT, authorization: `Bearer ${TOKEN}` }, body: '["a"]' }),
    );
    assert.equal(await allowed.json(), "psst, a");
    const grpc = await handler(
      new Request(`${BASE}/greet.GreetService/Greet`, { method: "POST", headers: { "content-type": "application/grpc" }, body: new Uint8Array(5) }),
    );
    assert.equal(grpc.status, 505);
    assert.equal(grpc.headers.get("grpc-status"), "12");
    assert.match(grpc.headers.get("grpc-message") ?? "", /needs HTTP\/2/);
  });

  it("a reader that cancels the streamed response aborts the call (ctx.signal)", async () => {
    const h = createFetchHandler({ services: [new Ticker()] });
    try {
      const aborted = new Promise<void>((r) => (Ticker.aborted = r));
      const r = await h(new Request(`${BASE}/adapters.Ticker/tick`, { method: "POST", headers: JSON_CT, body: "1" }));
      assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      assert.ok((await reader.read()).value);
      await reader.cancel();
      await aborted;
    } finally {
      await h.close();
    }
  });

  it("REST: a GET route with a path variable, and fallback leaves it alone", async () => {
    const h = createFetchHandler({ services: [new ThingService()], fallback: () => new Response("app") });
    try {
      const r = await h(new Request(`${BASE}/things/3`));
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), { id: 3, name: "thing 3" });
      assert.equal(await (await h(new Request(`${BASE}/other/3`))).text(), "app");
    } finally {
      await h.close();
    }
  });

  it("prefix and fallback: /api/<service>/<method> served, other paths to the app", async () => {
    const h = createFetchHandler({ services: [new GreetServiceImpl()], prefix: "/api", fallback: () => new Response("app", { status: 200 }) });
    try {
      const r = await h(new Request(`${BASE}/api/greet.GreetService/Greet`, { method: "POST", headers: JSON_CT, body: '{"name":"triple"}' }));
      assert.deepEqual(await r.json(), { greeting: "triple" });
      const app = await h(new Request(`${BASE}/api/other`));
      assert.equal(await app.text(), "app");
    } finally {
      await h.close();
    }
  });
});

describe("createFetchHandler behind a fetch-style server: real clients", () => {
  let server: http.Server;
  let handler: FetchHandler;
  let url = "";
  before(async () => {
    handler = createFetchHandler({ services: [new GreetServiceImpl()] });
    server = fetchServer(handler);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await handler.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("connect-node: Connect unary, server stream, GET; gRPC-Web unary and server stream", async () => {
    const d = greetDescriptors();
    const c: any = createConnectClient(d.service, createConnectTransport({ baseUrl: url, httpVersion: "1.1", useHttpGet: true }));
    assert.equal((await c.greet({ name: "triple" })).greeting, "triple");
    assert.equal((await c.greetCached({ name: "q" })).greeting, "hello, q");
    const got: string[] = [];
    for await (const m of c.greetServerStream({ name: "c" })) got.push(m.greeting);
    assert.equal(got.length, 3);
    const w: any = createConnectClient(d.service, createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }));
    assert.equal((await w.greet({ name: "triple" })).greeting, "triple");
    const wgot: string[] = [];
    for await (const m of w.greetServerStream({ name: "w" })) wgot.push(m.greeting);
    assert.equal(wgot.length, 3);
  });

  it("our client: Triple HTTP and Connect unary, and the error", async () => {
    for (const protocol of [undefined, "connect"] as const) {
      const client = createClient(GreetServiceImpl, { providers: [url], httpVersion: "1.1", protocol, retries: 0 });
      try {
        assert.deepEqual(await client.greet({ name: "triple" }), { greeting: "triple" });
        const err = (await client.greet({ name: "nobody" }).catch((e) => e)) as RpcError;
        assert.ok(err instanceof RpcError);
        assert.match(err.message, /name is not right: nobody/);
      } finally {
        closeClient(client);
      }
    }
  });
});
