import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type Client, closeClient, Code, createClient, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { selfSigned } from "../helpers/tls.js";

async function* names(...ns: string[]) {
  for (const name of ns) yield { name };
}

async function failure(p: Promise<unknown>): Promise<RpcError> {
  return p.then(
    () => assert.fail("should fail"),
    (e: unknown) => {
      assert.ok(e instanceof RpcError, String(e));
      return e;
    },
  );
}

/** Our Node client's `protocol: "websocket"` over TLS (wss://), with a deadline, a cancel, auth and a refused handshake. */
describe("our Node client over Triple over WebSocket (wss://)", () => {
  let server: TripleServer;
  let greet: Client<GreetServiceImpl>;
  let ca: Buffer;
  before(async () => {
    const { key, cert } = selfSigned();
    ca = cert;
    server = createServer({ services: [new GreetServiceImpl()], tls: { key, cert } });
    await server.listen({ port: 0 });
    greet = createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", tls: { ca }, retries: 0 });
  });
  after(async () => {
    closeClient(greet);
    await server.close();
  });

  it("the four call kinds over wss://", async () => {
    assert.deepEqual(await greet.greet({ name: "triple" }), { greeting: "triple" });
    const got: string[] = [];
    for await (const m of greet.greetServerStream({ name: "s" })) got.push(m.greeting);
    assert.equal(got.length, 3);
    assert.ok(await greet.greetClientStream(names("a", "b")));
    const echoed: string[] = [];
    for await (const m of greet.greetStream(names("x", "y", "z"))) echoed.push(m.greeting);
    assert.deepEqual(echoed, ["x", "y", "z"]);
  });

  it("a deadline: deadline_exceeded well before the handler's delay", async () => {
    const t = performance.now();
    const err = await failure(greet.greetSlowly({ name: "triple", delay_ms: 5_000 }, { timeoutMs: 300 }));
    assert.equal(err.code, Code.DeadlineExceeded);
    assert.ok(performance.now() - t < 3_000);
  });

  it("a caller's abort cancels a bidi stream", async () => {
    const ac = new AbortController();
    const it = greet.greetStream(names("a"), { signal: ac.signal })[Symbol.asyncIterator]();
    assert.deepEqual((await it.next()).value, { greeting: "a" });
    ac.abort();
    const err = await failure(it.next());
    assert.equal(err.code, Code.Cancelled);
  });

  it("a refused handshake is read from the HTTP error body (unknown version: unimplemented)", async () => {
    const c = createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", tls: { ca }, retries: 0, version: "9.9.9" });
    const err = await failure(c.greet({ name: "triple" }));
    closeClient(c);
    assert.equal(err.code, Code.Unimplemented);
    assert.match(err.message, /version "9.9.9"/);
  });

  it("bad options are TypeErrors naming the fix", () => {
    assert.throws(() => createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", contentType: "grpc+proto" }), /protocol websocket needs contentType json or proto/);
    assert.throws(() => createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", compression: "gzip" }), /sends messages uncompressed/);
  });
});
