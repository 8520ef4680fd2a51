import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { WebSocket } from "ws";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { BidiStream, createServer, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { wsCall, wsUrl } from "../websocket/ws-helpers.js";
import { Bystander } from "./attack.js";
import { settled } from "../helpers/wait.js";

/**
 * Triple over WebSocket under attack (issue 38): every hostile handshake or stream is refused with
 * a clear HTTP status or close code, and a well-behaved client calling beside it (the
 * {@link Bystander}, HTTP/1.1 and HTTP/2) is not disturbed. Each test is bounded in time.
 */

@Service("hostile.WsVault", { auth: true })
class WsVault {
  @Method({ kind: "bidi_streaming", auth: { roles: ["reader"] } })
  async *watch(@Param() keys: AsyncIterable<string>): AsyncIterable<string> {
    for await (const k of keys) yield `value of ${k}`;
  }
}

/** A bidi handler that takes none of its requests: what a slow consumer looks like to the transport. */
@Service("hostile.WsSink")
class WsSink {
  taken = 0;

  @BidiStream()
  async *hold(@Param() reqs: AsyncIterable<string>): AsyncIterable<string> {
    const it = reqs[Symbol.asyncIterator]();
    await it.next();
    this.taken++;
    await new Promise((r) => setTimeout(r, 3_000).unref());
    yield "late";
  }
}

const BOUNDED = { timeout: 10_000 };
const MAX_MESSAGE = 64 * 1024;
const IDLE_MS = 1_000;

describe("hostile: Triple over WebSocket", () => {
  let server: TripleServer;
  let url: (path: string) => string;
  const sink = new WsSink();
  before(async () => {
    server = createServer({
      services: [new GreetServiceImpl(), new WsVault(), sink],
      limits: { maxMessageBytes: MAX_MESSAGE },
      bodyIdleTimeoutMs: IDLE_MS,
      cors: { origins: ["https://app.example.com"] },
      auth: {
        verify: (token) => (token === "reader" ? { subject: "r", roles: ["reader"] } : token === "nobody" ? { subject: "n", roles: [] } : null),
      },
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
    url = (p) => wsUrl(server.url, p);
  });
  after(() => server.close());

  it("an oversized message is refused with close 1009 before it is buffered", BOUNDED, async () => {
    const by = new Bystander(server.url);
    const r = await wsCall(url("/greet.GreetService/GreetStream"), [Buffer.alloc(MAX_MESSAGE + 1, 0x20)], { end: "none" });
    assert.equal(r.code, 1009);
    assert.equal(r.messages.length, 0);
    await by.assertResponsive(2_000);
  });

  it("a flood of messages to a handler that takes none is held back: the server stops reading at its queue's bound", BOUNDED, async () => {
    const by = new Bystander(server.url);
    const ws = new WebSocket(url("/hostile.WsSink/hold"));
    await new Promise((r) => ws.once("open", r));
    const message = JSON.stringify("x".repeat(1000));
    const sent = 30_000; // ~30 MB
    // Sent in batches, so the bystander in this same process keeps its turns.
    for (let i = 0; i < sent; i += 500) {
      for (let j = 0; j < 500; j++) ws.send(message);
      await new Promise((r) => setImmediate(r));
    }
    // Until the server stops reading (what the attacker still buffers stops shrinking), not a fixed time.
    await settled(() => ws.bufferedAmount, 5000, "the attacker's buffered bytes");
    // What left the attacker: the kernel's socket buffers and the few messages of the server's queue.
    const taken = sent * (message.length + 8) - ws.bufferedAmount;
    ws.terminate();
    assert.ok(taken < 20 * 2 ** 20, `the server read ${Math.round(taken / 2 ** 20)} MiB of the flood`);
    assert.equal(sink.taken, 1);
    await by.assertResponsive(2_000);
  });

  it("a never-closing stream that sends nothing (and answers no ping) is closed 1008 after bodyIdleTimeoutMs", BOUNDED, async () => {
    const by = new Bystander(server.url);
    const t = performance.now();
    const r = await wsCall(url("/greet.GreetService/GreetStream"), [], { end: "none", autoPong: false, timeoutMs: 6_000 });
    const ms = performance.now() - t;
    assert.equal(r.code, 1008);
    assert.match(r.reason, /no message for 1000 ms \(bodyIdleTimeoutMs\)/);
    assert.ok(ms >= IDLE_MS * 0.9, `closed after ${Math.round(ms)} ms`);
    assert.equal(server.inflightCount, 0);
    await by.assertResponsive(2_000);
  });

  it("an upgrade to an unknown method is 404 with the JSON error body", BOUNDED, async () => {
    const r = await wsCall(url("/greet.GreetService/NoSuchMethod"), [], { end: "none" });
    assert.equal(r.status, 404);
    assert.equal(JSON.parse(r.body ?? "").code, "unimplemented");
  });

  it("an upgrade without credentials is 401, with a bad token 401, without the role 403; the verifier decides before any message", BOUNDED, async () => {
    const by = new Bystander(server.url);
    const none = await wsCall(url("/hostile.WsVault/watch"), ["a"], { end: "none" });
    assert.equal(none.status, 401);
    assert.match(none.body ?? "", /missing bearer token/);
    const bad = await wsCall(url("/hostile.WsVault/watch"), [], { end: "none", protocols: ["triple", "bearer.wrong"] });
    assert.equal(bad.status, 401);
    const role = await wsCall(url("/hostile.WsVault/watch"), [], { end: "none", headers: { authorization: "Bearer nobody" } });
    assert.equal(role.status, 403);
    assert.match(role.body ?? "", /requires one of the roles reader/);
    // The token as a subprotocol (what a browser can send) passes, and is not echoed back.
    const ok = await wsCall(url("/hostile.WsVault/watch"), ['"k"'], { end: "text", protocols: ["triple", "bearer.reader"] });
    assert.equal(ok.code, 1000, ok.reason);
    assert.deepEqual(ok.messages, ['"value of k"']);
    await by.assertResponsive(2_000);
  });

  it("a token in the query string is not taken as credentials", BOUNDED, async () => {
    const r = await wsCall(url("/hostile.WsVault/watch?authorization=Bearer%20reader"), [], { end: "none" });
    assert.equal(r.status, 401);
  });

  it("an Origin the CORS configuration does not allow is refused 403 at the handshake; an allowed one passes", BOUNDED, async () => {
    const bad = await wsCall(url("/greet.GreetService/Greet"), [], { end: "none", headers: { origin: "https://evil.example.net" } });
    assert.equal(bad.status, 403);
    assert.match(
      JSON.parse(bad.body ?? "").message,
      /origin "https:\/\/evil.example.net" may not open WebSocket calls here: add it to the server's cors.origins/,
    );
    const good = await wsCall(url("/greet.GreetService/Greet"), ['{"name":"triple"}'], { end: "none", headers: { origin: "https://app.example.com" } });
    assert.equal(good.code, 1000);
  });
});

describe("hostile: Triple over WebSocket without a CORS configuration", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  it("only the server's own origin may open calls (cross-site WebSocket hijacking)", BOUNDED, async () => {
    const u = wsUrl(server.url, "/greet.GreetService/Greet");
    const other = await wsCall(u, [], { end: "none", headers: { origin: "https://evil.example.net" } });
    assert.equal(other.status, 403);
    const same = await wsCall(u, ['{"name":"triple"}'], { end: "none", headers: { origin: server.url } });
    assert.equal(same.code, 1000);
  });

  it("graceful shutdown closes a running stream with 1001 and the reason", BOUNDED, async () => {
    const s = createServer({ services: [new GreetServiceImpl()], shutdownTimeoutMs: 200 });
    await s.listen({ port: 0, host: "127.0.0.1" });
    const call = wsCall(wsUrl(s.url, "/greet.GreetService/GreetStream"), ['{"name":"a"}'], { end: "none" });
    await new Promise((r) => setTimeout(r, 100));
    await s.close();
    const r = await call;
    assert.equal(r.code, 1001);
    assert.match(r.reason, /^unavailable: /);
  });
});
