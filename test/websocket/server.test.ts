import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { wsCall, wsUrl } from "./ws-helpers.js";

/**
 * Triple over WebSocket on our server, driven by a raw `ws` client (the framing rules of Dubbo
 * 3.3, apache/dubbo PR #14390, as docs/protocol.md quotes them): one connection per call, one
 * bare message per WebSocket message, close 1000 on success and 1011 with the reason otherwise.
 */
describe("Triple over WebSocket: the four call kinds on our server", () => {
  let server: TripleServer;
  let url: (path: string) => string;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()] });
    await server.listen({ port: 0 });
    url = (p) => wsUrl(server.url, p);
  });
  after(() => server.close());

  it("unary: one message in, one out, close 1000; the request side ends with the first message", async () => {
    const r = await wsCall(url("/greet.GreetService/Greet"), ['{"name":"triple"}'], { end: "none" });
    assert.deepEqual(
      r.messages.map((m) => JSON.parse(m)),
      [{ greeting: "triple" }],
    );
    assert.equal(r.code, 1000);
  });

  it("server streaming: three messages then close 1000", async () => {
    const r = await wsCall(url("/greet.GreetService/GreetServerStream"), ['{"name":"s"}'], { end: "none" });
    assert.equal(r.messages.length, 3);
    assert.match(r.messages[2], /3\/3/);
    assert.equal(r.code, 1000);
  });

  it("client streaming: messages, the empty text message ends the request side, one answer, close 1000", async () => {
    const r = await wsCall(url("/greet.GreetService/GreetClientStream"), ['{"name":"a"}', '{"name":"b"}'], { end: "text" });
    assert.equal(r.messages.length, 1);
    assert.equal(r.code, 1000);
  });

  it("bidi: 10,000 messages each way", async () => {
    const n = 10_000;
    const send = Array.from({ length: n }, (_, i) => JSON.stringify({ name: `m${i}` }));
    const r = await wsCall(url("/greet.GreetService/GreetStream"), send, { end: "text", timeoutMs: 20_000 });
    assert.equal(r.code, 1000, r.reason);
    assert.equal(r.messages.length, n);
    assert.equal(JSON.parse(r.messages[n - 1]).greeting, `m${n - 1}`);
  });

  it("a handler error closes 1011 with '<code>: <message>' as the reason", async () => {
    const r = await wsCall(url("/greet.GreetService/GreetWithDetails"), ['{"name":"wrong"}'], { end: "none" });
    assert.equal(r.code, 1011);
    assert.match(r.reason, /^[a-z_]+: /);
  });

  it("an unknown method is refused at the handshake: HTTP 404 and the JSON error body", async () => {
    const r = await wsCall(url("/greet.GreetService/Nope"), [], { end: "none" });
    assert.equal(r.status, 404);
    assert.match(r.body ?? "", /method not found: Nope/);
  });

  it("a timeout from the query (?tri-service-timeout=) is the call's deadline", async () => {
    const r = await wsCall(url("/greet.GreetService/GreetStream?tri-service-timeout=200"), [], { end: "none" });
    assert.equal(r.code, 1011);
    assert.match(r.reason, /^deadline_exceeded: /);
  });

  it("an unsupported content type is 415 naming the supported ones", async () => {
    const r = await wsCall(url("/greet.GreetService/Greet?content-type=text/xml"), [], { end: "none" });
    assert.equal(r.status, 415);
    assert.match(r.body ?? "", /supported: application\/json/);
  });
});

describe("Triple over WebSocket through createHandler in a node:http server of one's own", () => {
  let http: typeof import("node:http");
  let server: import("node:http").Server;
  let base: string;
  before(async () => {
    http = await import("node:http");
    const { createHandler } = await import("../../src/index.js");
    const handler = createHandler({ services: [new GreetServiceImpl()] });
    server = http.createServer(handler);
    server.on("upgrade", (req, socket, head) => {
      if (!handler.onUpgrade(req, socket, head)) socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const a = server.address() as import("node:net").AddressInfo;
    base = `ws://127.0.0.1:${a.port}`;
  });
  after(() => new Promise((r) => server.close(r)));

  it("a bidi call through the handler's onUpgrade", async () => {
    const r = await wsCall(`${base}/greet.GreetService/GreetStream`, ['{"name":"a"}', '{"name":"b"}'], { end: "text" });
    assert.equal(r.code, 1000);
    assert.deepEqual(
      r.messages.map((m) => JSON.parse(m).greeting),
      ["a", "b"],
    );
  });

  it("an upgrade to a path that is not a method's is left to the application (false)", async () => {
    const r = await wsCall(`${base}/chat`, [], { end: "none" });
    assert.equal(r.status, 404);
  });
});

describe("Triple over WebSocket in the access log", () => {
  let server: TripleServer;
  const lines: Record<string, unknown>[] = [];
  before(async () => {
    const log = { info: (f: Record<string, unknown>) => lines.push(f), warn: () => {}, error: () => {}, debug: () => {} };
    server = createServer({ services: [new GreetServiceImpl()], accessLog: log as never });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("a call and a refused handshake each leave a line with protocol triple-websocket", async () => {
    await wsCall(wsUrl(server.url, "/greet.GreetService/Greet"), ['{"name":"triple"}'], { end: "none" });
    await wsCall(wsUrl(server.url, "/greet.GreetService/Nope"), [], { end: "none" });
    await new Promise((r) => setTimeout(r, 50));
    const ws = lines.filter((l) => l.protocol === "triple-websocket");
    assert.equal(ws.length, 2, JSON.stringify(lines));
    assert.deepEqual(
      ws.map((l) => [l.path, l.code]),
      [
        ["/greet.GreetService/Greet", "ok"],
        ["/greet.GreetService/Nope", "unimplemented"],
      ],
    );
    assert.equal(ws[0].status, 101);
    assert.ok((ws[0].bytesIn as number) > 0 && (ws[0].bytesOut as number) > 0, JSON.stringify(ws[0]));
    assert.equal(ws[1].status, 404);
  });
});
