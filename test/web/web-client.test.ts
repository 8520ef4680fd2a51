import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { badRequestViolations, Code, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { type ClientInterceptor, createClient, type WebClientOptions } from "../../src/web.js";
import { Profile, WebTestContract } from "./contract.js";
import { WebTestService } from "./service.js";

/**
 * The web client (`triple-rpc/web`) run on Node's own fetch against our server: every protocol
 * and format it speaks, revival, errors with details, deadlines, cancellation, metadata, the
 * retry rule, interceptors, options checked. The same client runs in Chromium and Bun
 * (test/browser/web-client-browser.test.ts, test/web/bun.test.ts).
 */

const VARIANTS: { name: string; opts: Partial<WebClientOptions> }[] = [
  { name: "Triple JSON", opts: { protocol: "triple" } },
  { name: "Triple proto", opts: { protocol: "triple", contentType: "proto" } },
  { name: "Connect JSON", opts: { protocol: "connect" } },
  { name: "Connect proto", opts: { protocol: "connect", contentType: "proto" } },
  { name: "gRPC-Web binary", opts: { protocol: "grpc-web" } },
  { name: "gRPC-Web text", opts: { protocol: "grpc-web", grpcWebFormat: "text" } },
];

async function rejects(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof RpcError, `an RpcError, got ${e}`);
    return e;
  }
  assert.fail("the call succeeded");
}

describe("web client on Node's fetch", () => {
  let server: TripleServer;
  const service = new WebTestService();

  before(async () => {
    server = createServer({ services: [service] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server?.close());

  for (const v of VARIANTS) {
    describe(v.name, () => {
      const client = () => createClient(WebTestContract, { baseUrl: server.url, ...v.opts });

      it("unary: positional arguments, a string and a number back", async () => {
        const c = client();
        assert.equal(await c.greet("web"), "hello, web");
        assert.equal(await c.add(2, 3), 5);
      });

      it("revival: a decorated class with a Date, a bigint, a Map and bytes; a Date result", async () => {
        const p = await client().profile("Ada Lovelace", 21n);
        assert.ok(p instanceof Profile);
        assert.equal(p.initials(), "AL");
        assert.deepEqual(p.born, new Date(Date.UTC(2000, 1, 29, 12)));
        assert.equal(p.balance, 42n);
        assert.deepEqual(
          p.scores,
          new Map([
            ["a", 1],
            ["b", 2],
          ]),
        );
        assert.deepEqual([...p.avatar], [0, 1, 254, 255]);
        const d = await client().nextDay(new Date(Date.UTC(2024, 1, 28)));
        assert.deepEqual(d, new Date(Date.UTC(2024, 1, 29)));
      });

      it("revival: a Java value-class result checked by its parser, loaded for the method", async () => {
        assert.equal(await client().price("12.50"), "12.50");
        // Triple carries an IDL-less result as JSON, revived by the converter; Connect and gRPC-Web as its derived message.
        if (v.opts.protocol !== "triple") return;
        const e = await rejects(client().price("1.2.3"));
        assert.equal(e.code, Code.Internal);
        assert.match(
          e.message,
          /declared result of \/web\.WebTest\/price: the result must be a decimal number as text \(java\.math\.BigDecimal.*not a decimal number/,
        );
      });

      it("errors: the code and message; validation violations decoded as objects", async () => {
        const e = await rejects(client().greet("nobody"));
        assert.equal(e.code, Code.InvalidArgument);
        assert.equal(e.message, "name is not right: nobody");
        const bad = await rejects(client().label("ABCDEF", 0));
        assert.equal(bad.code, Code.InvalidArgument);
        assert.deepEqual(badRequestViolations(bad), [
          { field: "code", description: "must be at most 4 characters long" },
          { field: "code", description: "must match ^[a-z]+$" },
          { field: "n", description: "must be at least 1" },
        ]);
      });

      it("server streaming: bigints revived per message", async () => {
        const got: bigint[] = [];
        for await (const x of client().count(3)) got.push(x);
        assert.deepEqual(got, [10_000_000_000n, 20_000_000_000n, 30_000_000_000n]);
      });

      it("a deadline: deadline_exceeded well before the handler's 5 s", async () => {
        const t0 = Date.now();
        const e = await rejects(client().slow(5000, { timeoutMs: 200 }));
        assert.equal(e.code, Code.DeadlineExceeded);
        // Before the handler's own 5 s (less a margin): the deadline ended it (one-sided, generous).
        assert.ok(Date.now() - t0 < 4900, `took ${Date.now() - t0} ms`);
      });

      it("cancellation: an aborted signal is cancelled", async () => {
        const ac = new AbortController();
        setTimeout(() => ac.abort(), 100);
        const e = await rejects(client().slow(5000, { signal: ac.signal }));
        assert.equal(e.code, Code.Cancelled);
      });

      it("metadata, token, the timeout header; response headers", async () => {
        let seen: Readonly<Record<string, string | string[]>> | undefined;
        const c = createClient(WebTestContract, { baseUrl: server.url, ...v.opts, token: () => "t0k", metadata: { "x-custom": "a" } });
        const h = await c.headers({ timeoutMs: 5000, onHeaders: (x) => (seen = x) });
        assert.equal(h.authorization, "Bearer t0k");
        assert.equal(h["x-custom"], "a");
        assert.ok(h["tri-service-timeout"] ?? h["connect-timeout-ms"] ?? h["grpc-timeout"], JSON.stringify(h));
        assert.equal(seen?.["x-answer"], "42");
      });
    });
  }

  it("retries: unavailable twice, then the answer (Triple JSON, the default 2 retries)", async () => {
    const c = createClient(WebTestContract, { baseUrl: server.url });
    assert.equal(await c.flaky("r1"), 3);
    const none = createClient(WebTestContract, { baseUrl: server.url, retries: 0 });
    assert.equal((await rejects(none.flaky("r2"))).code, Code.Unavailable);
  });

  it("a network failure is unavailable naming the URL, and not retried for a method with side effects", async () => {
    let calls = 0;
    const c = createClient(WebTestContract, {
      baseUrl: "http://127.0.0.1:9",
      fetch: (input, init) => {
        calls++;
        return fetch(input, init);
      },
    });
    const e = await rejects(c.greet("x"));
    assert.equal(e.code, Code.Unavailable);
    assert.match(e.message, /cannot reach http:\/\/127\.0\.0\.1:9\/web\.WebTest\/greet/);
    assert.equal(calls, 1);
    await rejects(c.add(1, 2));
    assert.equal(calls, 4, "the idempotent add is tried 3 times");
  });

  it("Connect GET for an idempotent method with useGet", async () => {
    const methods: string[] = [];
    const c = createClient(WebTestContract, {
      baseUrl: server.url,
      protocol: "connect",
      useGet: true,
      fetch: (input, init) => {
        methods.push(`${init.method} ${input.split("?")[0]}`);
        return fetch(input, init);
      },
    });
    assert.equal(await c.add(40, 2), 42);
    assert.equal(await c.greet("get"), "hello, get");
    assert.deepEqual(methods, [`GET ${server.url}/web.WebTest/add`, `POST ${server.url}/web.WebTest/greet`]);
  });

  it("interceptors: metadata added, the response seen, a short circuit", async () => {
    const log: string[] = [];
    const icpt: ClientInterceptor = (next) => async (call) => {
      call.metadata["x-custom"] = "from-interceptor";
      log.push(`> ${call.method.name}`);
      if (call.input[0] === "stop") throw new RpcError(Code.PermissionDenied, "stopped");
      const r = await next(call);
      log.push(`< ${call.method.name} ${call.responseHeaders?.["x-answer"] ?? ""}`);
      return r;
    };
    const c = createClient(WebTestContract, { baseUrl: server.url, interceptors: [icpt] });
    const h = await c.headers();
    assert.equal(h["x-custom"], "from-interceptor");
    assert.equal((await rejects(c.greet("stop"))).code, Code.PermissionDenied);
    const got: bigint[] = [];
    for await (const x of c.count(2)) got.push(x);
    assert.equal(got.length, 2);
    assert.deepEqual(log, ["> headers", "< headers 42", "> greet", "> count", "< count "]);
  });

  it("maxResponseBytes: a larger unary body or stream message is resource_exhausted, the body cancelled", async () => {
    for (const protocol of ["triple", "connect", "grpc-web"] as const) {
      const c = createClient(WebTestContract, { baseUrl: server.url, protocol, maxResponseBytes: 8 });
      const e = await rejects(c.greet("a name longer than eight bytes"));
      assert.equal(e.code, Code.ResourceExhausted, `${protocol}: ${e.message}`);
      const s = await rejects(
        (async () => {
          for await (const _ of c.count(2)) {
            // the first message is over the limit
          }
        })(),
      );
      assert.equal(s.code, Code.ResourceExhausted, `${protocol} stream: ${s.message}`);
      assert.equal(await createClient(WebTestContract, { baseUrl: server.url, protocol }).greet("ok"), "hello, ok", "the server is unaffected");
    }
  });

  it("client and bidi streams without a streams transport: unimplemented, naming the option", async () => {
    const c = createClient(WebTestContract, { baseUrl: server.url });
    const e = await rejects(c.sum([1, 2, 3]));
    assert.equal(e.code, Code.Unimplemented);
    assert.match(e.message, /options\.streams/);
  });

  it("options are checked: TypeErrors naming the option", () => {
    const bad: [Partial<WebClientOptions>, RegExp][] = [
      [{}, /options\.baseUrl is required/],
      [{ baseUrl: "ftp://x" }, /options\.baseUrl must be an http: or https: URL/],
      [{ baseUrl: "not a url" }, /options\.baseUrl must be an absolute http\(s\) URL/],
      [{ baseUrl: "http://x", protocol: "grpc" as never }, /options\.protocol must be "triple", "connect", "grpc-web"/],
      [{ baseUrl: "http://x", contentType: "xml" as never }, /options\.contentType/],
      [{ baseUrl: "http://x", timeoutMs: -1 }, /options\.timeoutMs must be a positive number/],
      [{ baseUrl: "http://x", retries: Number.NaN }, /options\.retries/],
      [{ baseUrl: "http://x", grpcWebFormat: "text" }, /grpcWebFormat "text" is gRPC-Web's/],
      [{ baseUrl: "http://x", token: 5 as never }, /options\.token/],
    ];
    for (const [o, re] of bad)
      assert.throws(
        () => createClient(WebTestContract, o as WebClientOptions),
        (e: Error) => e instanceof TypeError && re.test(e.message),
        JSON.stringify(o),
      );
  });
});
