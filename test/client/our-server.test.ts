import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Client, closeClient, Code, type ClientContentType, createClient, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { GREET_PROTO, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { collect, EchoService, EchoV2, values } from "./services.js";

const COMBOS: { httpVersion: "1.1" | "2"; contentType: ClientContentType; protocol?: "connect" | "grpc-web" | "websocket" }[] = [
  { httpVersion: "1.1", contentType: "json", protocol: "websocket" },
  { httpVersion: "1.1", contentType: "proto", protocol: "websocket" },
  { httpVersion: "1.1", contentType: "json", protocol: "connect" },
  { httpVersion: "1.1", contentType: "proto", protocol: "connect" },
  { httpVersion: "2", contentType: "json", protocol: "connect" },
  { httpVersion: "2", contentType: "proto", protocol: "connect" },
  { httpVersion: "1.1", contentType: "proto", protocol: "grpc-web" },
  { httpVersion: "2", contentType: "proto", protocol: "grpc-web" },
  { httpVersion: "2", contentType: "json", protocol: "grpc-web" },
  { httpVersion: "1.1", contentType: "json" },
  { httpVersion: "1.1", contentType: "proto" },
  { httpVersion: "2", contentType: "json" },
  { httpVersion: "2", contentType: "proto" },
  { httpVersion: "2", contentType: "grpc+proto" },
  { httpVersion: "2", contentType: "grpc+json" },
];

describe("our client against our server", () => {
  let server: TripleServer;
  let url: string;
  const clients: object[] = [];
  const track = <T extends object>(c: T): T => {
    clients.push(c);
    return c;
  };
  before(async () => {
    server = createServer({
      services: [new GreetServiceImpl(), new EchoService(), { implementation: new EchoV2(), version: "2.0.0", group: "blue" }],
    });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await server.close();
  });

  for (const { httpVersion, contentType, protocol } of COMBOS) {
    describe(`${protocol ? `${protocol} ` : ""}HTTP/${httpVersion} ${contentType}`, () => {
      let greet: Client<GreetServiceImpl>;
      let echo: Client<EchoService>;
      before(() => {
        greet = track(createClient(GreetServiceImpl, { providers: [url], httpVersion, contentType, protocol, retries: 0 }));
        echo = track(createClient(EchoService, { providers: [url], httpVersion, contentType, protocol, retries: 0 }));
      });

      it("Greet with the accepted name returns the greeting", async () => {
        assert.deepEqual(await greet.greet({ name: "triple" }), { greeting: "triple" });
      });

      it("a wrong name fails with unknown and the handler's text", async () => {
        const err = await greet.greet({ name: "nobody" }).then(
          () => assert.fail("should fail"),
          (e: unknown) => e as RpcError,
        );
        assert.ok(err instanceof RpcError);
        assert.equal(err.code, Code.Unknown);
        assert.match(err.message, /name is not right: nobody$/);
      });

      it("IDL-less methods with several parameters, arrays and bytes", async () => {
        assert.equal(await echo.add(2, 3), 5);
        assert.equal(await echo.concat(["a", "b", "c"], "-"), "a-b-c");
        assert.equal(await echo.size(new Uint8Array([1, 2, 3, 4])), 4);
      });

      it("server errors keep their code and message", async () => {
        const err = (await echo.fail(Code.PermissionDenied, "no, ünïcødé %41").catch((e) => e)) as RpcError;
        assert.equal(err.code, Code.PermissionDenied);
        assert.match(err.message, /no, ünïcødé %41$/);
      });

      it("streaming methods work (over gRPC on HTTP/2 whatever the unary protocol)", async () => {
        const greetings = await collect(greet.greetServerStream({ name: "x" }));
        assert.deepEqual(
          greetings.map((g) => g.greeting),
          ["hello, x (1/3)", "hello, x (2/3)", "hello, x (3/3)"],
        );
        assert.deepEqual(await greet.greetClientStream(values([{ name: "a" }, { name: "b" }])), { greeting: "a, b" });
        assert.deepEqual(await collect(greet.greetStream(values([{ name: "p" }, { name: "q" }]))), [{ greeting: "p" }, { greeting: "q" }]);
        assert.deepEqual(await collect(echo.count(3)), [1, 2, 3]);
        assert.equal(await echo.sum([1, 2, 3, 4]), 10);
        assert.deepEqual(await collect(echo.double(values([1, 5]))), [2, 10]);
      });
    });
  }

  it("requests carry tri-protocol-version, version, group, timeout, authorization and metadata", async () => {
    for (const httpVersion of ["1.1", "2"] as const) {
      const echo = track(
        createClient(EchoService, {
          providers: [url],
          httpVersion,
          token: "s3cret",
          timeoutMs: 5000,
          metadata: { "x-custom": "client" },
        }),
      );
      let headers: Record<string, string | string[]> = {};
      const seen = await echo.seen({ metadata: { "x-custom": "call" }, onHeaders: (h) => (headers = { ...h }) });
      assert.equal(seen.protocolVersion, "1.0.0");
      assert.equal(seen.authorization, "Bearer s3cret");
      assert.equal(seen.custom, "call");
      assert.equal(seen.contentType, "application/json");
      assert.ok(Number(seen.timeout) > 4000 && Number(seen.timeout) <= 5000, `tri-service-timeout ${seen.timeout}`);
      assert.equal(headers["x-answer"], "42");
    }
    const grpc = track(createClient(EchoService, { providers: [url], protocol: "grpc", timeoutMs: 3000, token: async () => "fresh" }));
    const seen = await grpc.seen();
    assert.match(String(seen.grpcTimeout), /^\d+[mu]$/);
    assert.equal(seen.authorization, "Bearer fresh");
    assert.equal(seen.contentType, "application/grpc+proto");
    assert.equal(seen.protocolVersion, "1.0.0");
  });

  it("Connect and gRPC-Web JSON carry ProtoJSON of the derived messages for IDL-less methods (Triple's arrays are read too)", async () => {
    const post = async (body: string) => {
      const r = await fetch(`${url}/test.Echo/add`, {
        method: "POST",
        headers: { "content-type": "application/json", "connect-protocol-version": "1" },
        body,
      });
      return { status: r.status, text: await r.text() };
    };
    assert.deepEqual(await post('{"arg1":2,"arg2":3}'), { status: 200, text: '{"value":5}' });
    assert.deepEqual(await post("[2,3]"), { status: 200, text: '{"value":5}' });
    const bad = await post('{"arg1":"two"}');
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.text).code, "invalid_argument");
  });

  it("version and group select the implementation", async () => {
    const v1 = track(createClient(EchoService, { providers: [url] }));
    const v2 = track(createClient(EchoService, { providers: [url], version: "2.0.0", group: "blue" }));
    assert.equal(await v1.add(1, 2), 3);
    assert.equal(await v2.add(1, 2), 1003);
  });

  it("a client-side timeout is deadline_exceeded with legacy status 30, on both transports and gRPC", async () => {
    for (const opts of [
      { httpVersion: "1.1" as const },
      { httpVersion: "2" as const },
      { protocol: "grpc" as const },
      { protocol: "connect" as const, httpVersion: "1.1" as const },
      { protocol: "connect" as const },
      { protocol: "grpc-web" as const, httpVersion: "1.1" as const },
    ]) {
      const echo = track(createClient(EchoService, { providers: [url], ...opts, retries: 2 }));
      const calls = EchoService.slowCalls;
      // The server gets a longer timeout header than ours would allow it to use: we give up first.
      const err = (await echo.slow(2000, { timeoutMs: 150 }).catch((e) => e)) as RpcError;
      assert.ok(err instanceof RpcError, String(err));
      assert.equal(err.code, Code.DeadlineExceeded, err.message);
      // A count, not a time: the server saw one call (retries: 2 would make it three).
      assert.equal(EchoService.slowCalls - calls, 1, "no retry after a deadline");
      if (err.legacyStatus !== 31) assert.equal(err.legacyStatus, 30);
    }
  });

  it("an AbortSignal cancels the call with cancelled", async () => {
    for (const opts of [
      { httpVersion: "1.1" as const },
      { httpVersion: "2" as const },
      { protocol: "grpc" as const },
      { protocol: "connect" as const, httpVersion: "1.1" as const },
      { protocol: "connect" as const },
      { protocol: "grpc-web" as const, httpVersion: "1.1" as const },
    ]) {
      const echo = track(createClient(EchoService, { providers: [url], ...opts }));
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 50);
      const err = (await echo.slow(2000, { signal: ac.signal }).catch((e) => e)) as RpcError;
      assert.equal(err.code, Code.Cancelled, err.message);
      // an already-aborted signal fails at once
      const err2 = (await echo.add(1, 2, { signal: ac.signal }).catch((e) => e)) as RpcError;
      assert.equal(err2.code, Code.Cancelled);
    }
  });

  it("stopping a server stream early cancels it; the session stays usable", async () => {
    const echo = track(createClient(EchoService, { providers: [url], protocol: "grpc" }));
    const got: number[] = [];
    for await (const n of echo.count(1000)) {
      got.push(n);
      if (n === 3) break;
    }
    assert.deepEqual(got, [1, 2, 3]);
    assert.equal(await echo.add(2, 2), 4);
  });

  it("a client built from the .proto file calls the same service", async () => {
    const c = track(createClient({ proto: GREET_PROTO, service: "greet.GreetService" }, { providers: [url], contentType: "proto" }));
    assert.deepEqual(await c.Greet({ name: "triple" }), { greeting: "triple" });
    assert.deepEqual(await c.greet({ name: "triple" }), { greeting: "triple" });
    assert.equal((await collect(c.GreetServerStream({ name: "z" }) as AsyncIterable<unknown>)).length, 3);
  });

  it("unknown methods are unimplemented; compression round-trips large bodies", async () => {
    const c = track(createClient({ proto: GREET_PROTO, service: "greet.GreetService" }, { providers: [url], serviceName: "greet.Nope", retries: 0 }));
    const err = (await c.Greet({ name: "x" }).catch((e: unknown) => e)) as RpcError;
    assert.equal(err.code, Code.Unimplemented);
    for (const opts of [
      { compression: "gzip" as const },
      { compression: "br" as const, httpVersion: "1.1" as const },
      { compression: "gzip" as const, protocol: "grpc" as const },
      { compression: "br" as const, protocol: "connect" as const },
      { compression: "gzip" as const, protocol: "grpc-web" as const, httpVersion: "1.1" as const },
    ]) {
      const echo = track(createClient(EchoService, { providers: [url], ...opts }));
      const big = Array.from({ length: 2000 }, (_, i) => `part${i}`);
      assert.equal((await echo.concat(big, ",")).length, big.join(",").length);
    }
  });
});
