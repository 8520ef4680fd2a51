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
    // Before the handler's own 5 s (less a margin): the 300 ms deadline ended it (one-sided, generous).
    assert.ok(performance.now() - t < 4_900, `ended after ${Math.round(performance.now() - t)} ms`);
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
    assert.throws(
      () => createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", contentType: "grpc+proto" }),
      /protocol websocket needs contentType json or proto/,
    );
    assert.throws(() => createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", compression: "gzip" }), /sends messages uncompressed/);
    const end = (websocket: unknown) => () => createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", websocket: websocket as never });
    assert.throws(end({ endOfRequest: "closed" }), /createClient: websocket.endOfRequest must be "message" or "close", got "closed"/);
    assert.throws(end({ endOfReqest: "close" }), /createClient: websocket.endOfReqest is not an option \(did you mean endOfRequest\?\)/);
  });
});

/**
 * Dubbo Java's WebSocket transport (apache/dubbo PR #14390, built from its sources against the
 * 3.3.1 jars) answers the handshake without selecting a subprotocol; `ws` fails a handshake that
 * offered one and got none ("Server sent no subprotocol"). A `ws` server that selects none, as
 * Dubbo's does, echoing each message and closing 1000 after the client's close.
 */
describe("our Node client and a WebSocket server that selects no subprotocol (as Dubbo Java's)", () => {
  let wss: import("ws").WebSocketServer;
  let url = "";
  const offered: string[] = [];
  before(async () => {
    const { WebSocketServer } = await import("ws");
    wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false, handleProtocols: () => false });
    await new Promise<void>((r) => wss.once("listening", () => r()));
    wss.on("connection", (ws, req) => {
      offered.push(String(req.headers["sec-websocket-protocol"] ?? ""));
      // GreetServerStream's JSON request in, three greetings out, then close 1000 (success).
      ws.once("message", () => {
        for (let i = 1; i <= 3; i++) ws.send(Buffer.from(JSON.stringify({ greeting: `g${i}` })));
        ws.close(1000);
      });
    });
    url = `127.0.0.1:${(wss.address() as import("node:net").AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => wss.close(() => r())));

  it("the handshake succeeds and the call runs (offers no subprotocol; the headers carry everything)", async () => {
    const c = createClient(GreetServiceImpl, { providers: [url], protocol: "websocket", retries: 0, timeoutMs: 5000 });
    try {
      const got: string[] = [];
      for await (const m of c.greetServerStream({ name: "s" })) got.push(m.greeting);
      assert.deepEqual(got, ["g1", "g2", "g3"]);
      assert.deepEqual(offered, [""]);
    } finally {
      closeClient(c);
    }
  });
});
