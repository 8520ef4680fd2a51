import * as grpc from "@grpc/grpc-js";
import { createClient as createConnectClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { it } from "node:test";
import { promisify } from "node:util";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { closeClient, Code, createClient, Get, type HandlerOptions, Method, Param, Path, RpcError, Service, ServerStream } from "../../src/index.js";
import { greetDescriptors } from "../connect/greet-descriptors.js";
import { clients as grpcClients, unary } from "../grpc/grpc-js-client.js";
import { post1, post2 } from "../helpers/http.js";

const run = promisify(execFile);

/** A service every method of which needs a bearer token. */
@Service("adapters.Secret", { auth: true })
export class SecretService {
  @Method()
  async whisper(@Param() word: string): Promise<string> {
    return `psst, ${word}`;
  }
}

/** A REST route, served by mounted handlers as by createServer. */
@Service("adapters.Things")
export class ThingService {
  @Get("/things/{id}")
  @Method()
  async thing(@Path("id") id: number): Promise<{ id: number; name: string }> {
    return { id, name: `thing ${id}` };
  }

  /** Counts to n, and fails past 3 (an error after messages were sent). */
  @ServerStream()
  async *countTo(@Param("n") n: number): AsyncGenerator<number> {
    for (let i = 1; i <= n; i++) {
      if (i > 3) throw new RpcError(Code.FailedPrecondition, "no more than 3");
      yield i;
    }
  }
}

/** The token the mounted services accept. */
export const TOKEN = "let-me-in";

/** What every adapter test mounts: greet, a protected service, a small body limit, auth. */
export function mountedOptions(): HandlerOptions {
  return {
    services: [new GreetServiceImpl(), new SecretService(), new ThingService()],
    openapi: true,
    limits: { maxBodyBytes: 64 * 1024 },
    auth: { verify: (t) => (t === TOKEN ? { subject: "tester" } : null) },
  };
}

/** The app route every adapter test serves beside the services. */
export const APP_ROUTE = "/app/hello";
export const APP_TEXT = "app route says hi";

/** curl, HTTP/1.1 or HTTP/2 prior knowledge; returns status and body. */
async function curl(url: string, h2: boolean, args: string[]): Promise<{ status: number; body: string }> {
  const { stdout } = await run("curl", ["-s", ...(h2 ? ["--http2-prior-knowledge"] : ["--http1.1"]), "-w", "\n%{http_code}", ...args, url]);
  const i = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(i + 1)), body: stdout.slice(0, i) };
}

/**
 * The contract every mounted handler must keep, as `it` cases: our client, connect-node, curl
 * (and grpc-js on HTTP/2) reach the services; the app route still answers; limits and auth hold.
 * `url()` is read when the cases run.
 */
export function mountedContract(url: () => string, http2: boolean): void {
  it("our client calls the mounted service (unary, and server stream)", async () => {
    const client = createClient(GreetServiceImpl, { providers: [url()], httpVersion: http2 ? "2" : "1.1", retries: 0 });
    try {
      assert.deepEqual(await client.greet({ name: "triple" }), { greeting: "triple" });
      const got: string[] = [];
      if (http2) for await (const r of client.greetServerStream({ name: "s" })) got.push(r.greeting);
      if (http2) assert.deepEqual(got, ["hello, s (1/3)", "hello, s (2/3)", "hello, s (3/3)"]);
      const err = (await client.greet({ name: "nobody" }).catch((e) => e)) as RpcError;
      assert.ok(err instanceof RpcError);
      assert.match(err.message, /name is not right: nobody/);
    } finally {
      closeClient(client);
    }
  });

  if (!http2) {
    it("our client streams a server stream over HTTP/1.1 with the default protocol (Server-Sent Events), its error after the first message too", async () => {
      const client = createClient(GreetServiceImpl, { providers: [url()], httpVersion: "1.1", retries: 0 });
      try {
        const got: string[] = [];
        for await (const r of client.greetServerStream({ name: "sse" })) got.push(r.greeting);
        assert.deepEqual(got, ["hello, sse (1/3)", "hello, sse (2/3)", "hello, sse (3/3)"]);
      } finally {
        closeClient(client);
      }
      const things = createClient(ThingService, { providers: [url()], httpVersion: "1.1", retries: 0 });
      try {
        const counted: number[] = [];
        for await (const n of things.countTo(2)) counted.push(n);
        assert.deepEqual(counted, [1, 2]);
        const seen: number[] = [];
        const late = (await (async () => {
          for await (const n of things.countTo(5)) seen.push(n);
        })().catch((e) => e)) as RpcError;
        assert.deepEqual(seen, [1, 2, 3]);
        assert.ok(late instanceof RpcError, String(late));
        assert.equal(late.code, Code.FailedPrecondition);
        assert.equal(late.message, "no more than 3");
      } finally {
        closeClient(things);
      }
    });

    it("our client streams a server stream over HTTP/1.1 (protocol connect); client and bidi streams say they need HTTP/2", async () => {
      const client = createClient(GreetServiceImpl, { providers: [url()], protocol: "connect", httpVersion: "1.1", retries: 0 });
      try {
        const got: string[] = [];
        for await (const r of client.greetServerStream({ name: "h1" })) got.push(r.greeting);
        assert.deepEqual(got, ["hello, h1 (1/3)", "hello, h1 (2/3)", "hello, h1 (3/3)"]);
        // The handler's error after the stream started arrives as the stream's error.
        async function* names() {
          yield { name: "a" };
        }
        const e = (await client.greetClientStream(names()).catch((x) => x)) as RpcError;
        assert.ok(e instanceof RpcError);
        assert.match(e.message, /client and bidi streams need HTTP\/2/);
      } finally {
        closeClient(client);
      }
    });
  }

  it("connect-node calls it (Connect unary + server stream, and gRPC-Web)", async () => {
    const d = greetDescriptors();
    const httpVersion = http2 ? "2" : "1.1";
    const c: any = createConnectClient(d.service, createConnectTransport({ baseUrl: url(), httpVersion }));
    assert.equal((await c.greet({ name: "triple" })).greeting, "triple");
    const got: string[] = [];
    for await (const r of c.greetServerStream({ name: "c" })) got.push(r.greeting);
    assert.equal(got.length, 3);
    const w: any = createConnectClient(d.service, createGrpcWebTransport({ baseUrl: url(), httpVersion }));
    assert.equal((await w.greet({ name: "triple" })).greeting, "triple");
  });

  if (http2) {
    it("grpc-js calls it (unary, server stream, and the protocol's error)", async () => {
      const client = new grpcClients.greet(url().replace(/^http:\/\//, ""), grpc.credentials.createInsecure());
      try {
        const ok = await unary(client, "Greet", { name: "triple" });
        assert.equal(ok.response?.greeting, "triple");
        const bad = await unary(client, "Greet", { name: "x" });
        assert.equal(bad.error?.code, grpc.status.UNKNOWN);
        const got: string[] = [];
        await new Promise<void>((resolve, reject) => {
          const call = client.GreetServerStream({ name: "g" });
          call.on("data", (m: { greeting: string }) => got.push(m.greeting));
          call.on("end", resolve);
          call.on("error", reject);
        });
        assert.equal(got.length, 3);
      } finally {
        client.close();
      }
    });
  }

  it("curl calls it with plain JSON (Triple HTTP), and the app route still answers", async () => {
    const r = await curl(`${url()}/greet.GreetService/Greet`, http2, ["-H", "content-type: application/json", "-d", '{"name":"triple"}']);
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { greeting: "triple" });
    const app = await curl(`${url()}${APP_ROUTE}`, http2, []);
    assert.equal(app.status, 200);
    assert.equal(app.body, APP_TEXT);
  });

  it("SSE: a server stream called with plain JSON is text/event-stream", async () => {
    const r = await (http2 ? post2 : post1)(url(), "/greet.GreetService/GreetServerStream", {
      headers: { "content-type": "application/json" },
      body: '{"name":"sse"}',
    });
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^text\/event-stream/);
    assert.equal(r.text().match(/^data: \{"greeting":"hello, sse \(\d\/3\)"\}$/gm)?.length, 3);
  });

  it("REST routes and the OpenAPI document are served too; another HTTP method on a REST path is its 405", async () => {
    const r = await curl(`${url()}/things/7`, http2, []);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body), { id: 7, name: "thing 7" });
    const wrong = await curl(`${url()}/things/7`, http2, ["-X", "DELETE"]);
    assert.equal(wrong.status, 405, wrong.body);
    const doc = await curl(`${url()}/openapi.json`, http2, []);
    assert.equal(doc.status, 200);
    assert.ok(JSON.parse(doc.body).paths["/things/{id}"]);
  });

  it("the body limit holds: 413 / resource_exhausted", async () => {
    const body = JSON.stringify({ name: "x".repeat(100 * 1024) });
    const post = http2 ? post2 : post1;
    const r = await post(url(), "/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body });
    assert.equal(r.status, 413);
    assert.match(r.text(), /64 KiB|65536|limit/i);
  });

  it("auth holds: no token → 401 / unauthenticated; the token → served", async () => {
    const client = createClient(SecretService, { providers: [url()], httpVersion: http2 ? "2" : "1.1", retries: 0 });
    const authed = createClient(SecretService, { providers: [url()], httpVersion: http2 ? "2" : "1.1", retries: 0, token: TOKEN });
    try {
      const err = (await client.whisper("hi").catch((e) => e)) as RpcError;
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(await authed.whisper("hi"), "psst, hi");
      const raw = await (http2 ? post2 : post1)(url(), "/adapters.Secret/whisper", { headers: { "content-type": "application/json" }, body: '["hi"]' });
      assert.equal(raw.status, 401);
    } finally {
      closeClient(client);
      closeClient(authed);
    }
  });
}
