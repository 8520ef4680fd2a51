import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as assert from "node:assert/strict";
import type * as http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { GREET_CACHE_CONTROL, GREET_ERROR_DOMAIN, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { greetDescriptors } from "./greet-descriptors.js";
import { recordingProxy, type Seen } from "./raw.js";

/**
 * connect-node features beyond the protocol table: GET for the idempotent method
 * (`useHttpGet`), gzip both ways (`sendCompression` / `acceptCompression`), and error details
 * read back with `findDetails`. HTTP/1.1 calls go through a recording proxy, so the test sees
 * the HTTP method, query and encodings on the wire.
 */
describe("connect-node: GET, gzip and details against the greet sample", () => {
  const d = greetDescriptors();
  // The descriptors are built at run time, so the client's methods are untyped.
  const clientOf = (t: Transport): any => createClient(d.service, t);
  let server: TripleServer;
  let proxy: http.Server;
  let proxyUrl: string;
  const seen: Seen[] = [];
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()] });
    await server.listen({ port: 0 });
    proxy = await recordingProxy(server.url, seen);
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((r) => proxy.close(r));
    await server.close();
  });

  it("the descriptors say GreetCached has no side effects (idempotency_level survives protobufjs)", () => {
    assert.equal(d.service.method.greetCached.idempotency, 1 /* NO_SIDE_EFFECTS */);
    assert.equal(d.service.method.greet.idempotency, 0);
  });

  for (const useBinaryFormat of [false, true]) {
    it(`useHttpGet (${useBinaryFormat ? "binary" : "JSON"}, HTTP/1.1): GreetCached goes out as GET, Greet stays POST`, async () => {
      seen.length = 0;
      const client = clientOf(createConnectTransport({ baseUrl: proxyUrl, httpVersion: "1.1", useHttpGet: true, useBinaryFormat }));
      let cacheControl: string | null = null;
      const res = await client.greetCached({ name: "g" }, { onHeader: (h: Headers) => (cacheControl = h.get("cache-control")) });
      assert.equal(res.greeting, "hello, g");
      assert.equal(cacheControl, GREET_CACHE_CONTROL);
      assert.equal((await client.greet({ name: "triple" })).greeting, "triple");
      assert.equal(seen.length, 2);
      assert.equal(seen[0].method, "GET");
      const q = new URL(seen[0].url, "http://x").searchParams;
      assert.equal(q.get("connect"), "v1");
      assert.equal(q.get("encoding"), useBinaryFormat ? "proto" : "json");
      if (useBinaryFormat) assert.equal(q.get("base64"), "1");
      assert.equal(seen[1].method, "POST");
    });
  }

  it("useHttpGet over HTTP/2", async () => {
    const client = clientOf(createConnectTransport({ baseUrl: server.url, httpVersion: "2", useHttpGet: true }));
    let cacheControl: string | null = null;
    const res = await client.greetCached({ name: "h2" }, { onHeader: (h: Headers) => (cacheControl = h.get("cache-control")) });
    assert.equal(res.greeting, "hello, h2");
    assert.equal(cacheControl, GREET_CACHE_CONTROL);
  });

  it("gzip both ways: unary content-encoding, stream connect-content-encoding", async () => {
    seen.length = 0;
    const client = clientOf(
      createConnectTransport({
        baseUrl: proxyUrl,
        httpVersion: "1.1",
        sendCompression: compressionGzip,
        acceptCompression: [compressionGzip],
        compressMinBytes: 0,
      }),
    );
    const name = "z".repeat(2000);
    assert.equal((await client.greetCached({ name })).greeting, `hello, ${name}`);
    const got: string[] = [];
    for await (const r of client.greetServerStream({ name })) got.push(r.greeting);
    assert.equal(got.length, 3);
    const [unary, stream] = seen;
    assert.equal(unary.requestHeaders["content-encoding"], "gzip");
    assert.equal(unary.responseHeaders?.["content-encoding"], "gzip");
    assert.equal(stream.requestHeaders["connect-content-encoding"], "gzip");
    assert.equal(stream.responseHeaders?.["connect-content-encoding"], "gzip");
  });

  it("gzip on a GET (compression=gzip in the query)", async () => {
    seen.length = 0;
    const client = clientOf(
      createConnectTransport({
        baseUrl: proxyUrl,
        httpVersion: "1.1",
        useHttpGet: true,
        sendCompression: compressionGzip,
        acceptCompression: [compressionGzip],
        compressMinBytes: 0,
      }),
    );
    assert.equal((await client.greetCached({ name: "q" })).greeting, "hello, q");
    assert.equal(seen[0].method, "GET");
    assert.equal(new URL(seen[0].url, "http://x").searchParams.get("compression"), "gzip");
  });

  for (const [label, make] of [
    ["Connect", () => createConnectTransport({ baseUrl: server.url, httpVersion: "2" })],
    ["gRPC-Web", () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1" })],
  ] as const) {
    it(`${label}: the google.rpc.ErrorInfo detail read back with findDetails`, async () => {
      const client = clientOf(make());
      const err = await client.greetWithDetails({ name: "nobody" }).then(
        () => assert.fail("should fail"),
        (e: unknown) => ConnectError.from(e),
      );
      assert.equal(err.code, Code.InvalidArgument);
      assert.equal(err.rawMessage, "name is not right: nobody");
      const [info] = err.findDetails(d.errorInfo) as { reason: string; domain: string; metadata: Record<string, string> }[];
      assert.deepEqual(
        { reason: info.reason, domain: info.domain, metadata: info.metadata },
        {
          reason: "NAME_NOT_RIGHT",
          domain: GREET_ERROR_DOMAIN,
          metadata: { name: "nobody", accepted: "triple" },
        },
      );
    });
  }

  it("a deadline from the client: connect-timeout-ms reaches the server, which gives up", async () => {
    const seenTimeout: (string | null)[] = [];
    const record: Interceptor = (next) => async (req) => {
      seenTimeout.push(req.header.get("connect-timeout-ms"));
      return next(req);
    };
    const client = clientOf(createConnectTransport({ baseUrl: server.url, httpVersion: "2", interceptors: [record] }));
    const err = await client.greetSlowly({ name: "s", delayMs: 5000 }, { timeoutMs: 200 }).then(
      () => assert.fail("should fail"),
      (e: unknown) => ConnectError.from(e),
    );
    assert.equal(err.code, Code.DeadlineExceeded);
    for (let i = 0; i < 100 && server.inflightCount > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.inflightCount, 0, "the handler was aborted, not left running");
  });
});
