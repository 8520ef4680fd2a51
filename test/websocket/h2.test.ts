import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import {
  BidiStream,
  type Client,
  closeClient,
  Code,
  createClient,
  createHandler,
  createServer,
  type Interceptor,
  Method,
  Param,
  RpcError,
  Service,
  type TripleServer,
} from "../../src/index.js";
import { selfSigned } from "../helpers/tls.js";
import { Bystander } from "../hostile/attack.js";
import { h2wsCall, settledSession } from "./h2-helpers.js";

/**
 * Triple over WebSocket on HTTP/2 extended CONNECT (RFC 8441), on the server's one port over h2c
 * (prior knowledge) and TLS (ALPN h2): the same checks before the 200 as the HTTP/1.1 upgrade
 * has, the same exchange after it, beside ordinary gRPC calls on the same session; and our Node
 * client's `httpVersion: "2"` opening its WebSocket calls that way.
 */

@Service("h2ws.Vault", { auth: true })
class Vault {
  @Method({ kind: "bidi_streaming", auth: { roles: ["reader"] } })
  async *watch(@Param() keys: AsyncIterable<string>): AsyncIterable<string> {
    for await (const k of keys) yield `value of ${k}`;
  }
}

/** A bidi stream that answers one message then waits for the server to go away. */
@Service("h2ws.Slow")
class Slow {
  @BidiStream()
  async *hold(@Param() reqs: AsyncIterable<string>): AsyncIterable<string> {
    for await (const r of reqs) {
      yield `got ${r}`;
      await new Promise((res) => setTimeout(res, 10_000).unref());
    }
  }
}

const MAX_MESSAGE = 64 * 1024;
const BOUNDED = { timeout: 20_000 };

/** The HTTP version each call was served over, by method path. */
function recorder(seen: string[], ports: number[]): Interceptor {
  return (next) => async (call) => {
    seen.push(`${call.context.protocol} ${call.context.httpVersion}`);
    if (call.context.protocol === "triple-websocket") ports.push(call.context.peer.port);
    return next(call);
  };
}

for (const secure of [false, true]) {
  const name = secure ? "TLS (ALPN h2)" : "h2c (prior knowledge)";
  describe(`Triple over WebSocket on HTTP/2 extended CONNECT, ${name}`, () => {
    let server: TripleServer;
    let session: http2.ClientHttp2Session;
    let ca: Buffer | undefined;
    const seen: string[] = [];
    const ports: number[] = [];
    before(async () => {
      const tls = secure ? selfSigned() : undefined;
      ca = tls?.cert;
      server = createServer({
        services: [new GreetServiceImpl(), new Vault(), new Slow()],
        limits: { maxMessageBytes: MAX_MESSAGE },
        cors: { origins: ["https://app.example.com"] },
        interceptors: [recorder(seen, ports)],
        shutdownTimeoutMs: 300,
        auth: { verify: (token) => (token === "reader" ? { subject: "r", roles: ["reader"] } : null) },
        ...(tls ? { tls } : {}),
      });
      await server.listen({ port: 0 });
      session = await settledSession(server.url, ca ? { ca } : {});
    });
    after(async () => {
      session.close();
      await server.close();
    });

    it("the server advertises SETTINGS_ENABLE_CONNECT_PROTOCOL", () => {
      assert.equal(session.remoteSettings.enableConnectProtocol, true);
    });

    it("bidi: 10,000 messages each way, close 1000, served as an HTTP/2 WebSocket call", BOUNDED, async () => {
      const n = 10_000;
      const send = Array.from({ length: n }, (_, i) => JSON.stringify({ name: `m${i}` }));
      seen.length = 0;
      const r = await h2wsCall(session, "/greet.GreetService/GreetStream", send, { end: "text", timeoutMs: 15_000 });
      assert.equal(r.code, 1000, r.reason);
      assert.equal(r.responseHeaders?.[":status"], 200);
      assert.equal(r.responseHeaders?.["sec-websocket-accept"], undefined);
      assert.equal(r.messages.length, n);
      assert.equal(JSON.parse(r.messages[n - 1]).greeting, `m${n - 1}`);
      assert.deepEqual(
        seen.filter((x) => x.startsWith("triple-websocket")),
        ["triple-websocket 2"],
      );
    });

    it("client stream: messages, the empty text message ends the request side, one answer", BOUNDED, async () => {
      const r = await h2wsCall(session, "/greet.GreetService/GreetClientStream", ['{"name":"a"}', '{"name":"b"}'], { end: "text" });
      assert.equal(r.code, 1000, r.reason);
      assert.equal(r.messages.length, 1);
    });

    it("a handler error closes 1011 with '<code>: <message>'", BOUNDED, async () => {
      const r = await h2wsCall(session, "/greet.GreetService/GreetWithDetails", ['{"name":"wrong"}'], { end: "none" });
      assert.equal(r.code, 1011);
      assert.match(r.reason, /^[a-z_]+: /);
    });

    it("an unknown method is 404 with the JSON error body, no WebSocket", BOUNDED, async () => {
      const r = await h2wsCall(session, "/greet.GreetService/Nope", [], { end: "none" });
      assert.equal(r.status, 404);
      assert.equal(JSON.parse(r.body ?? "").code, "unimplemented");
    });

    it("an Origin the CORS configuration does not allow is 403; an allowed one passes with its CORS headers", BOUNDED, async () => {
      const bad = await h2wsCall(session, "/greet.GreetService/Greet", [], { end: "none", headers: { origin: "https://evil.example.net" } });
      assert.equal(bad.status, 403);
      const good = await h2wsCall(session, "/greet.GreetService/Greet", ['{"name":"triple"}'], { end: "none", headers: { origin: "https://app.example.com" } });
      assert.equal(good.code, 1000, good.reason);
      assert.equal(good.responseHeaders?.["access-control-allow-origin"], "https://app.example.com");
    });

    it("auth: no token 401, then the token as header or subprotocol passes (subprotocol triple selected, token not echoed)", BOUNDED, async () => {
      const none = await h2wsCall(session, "/h2ws.Vault/watch", ['"a"'], { end: "none" });
      assert.equal(none.status, 401);
      assert.match(none.body ?? "", /missing bearer token/);
      const header = await h2wsCall(session, "/h2ws.Vault/watch", ['"k"'], { end: "text", headers: { authorization: "Bearer reader" } });
      assert.deepEqual(header.messages, ['"value of k"']);
      const sub = await h2wsCall(session, "/h2ws.Vault/watch", ['"k"'], { end: "text", headers: { "sec-websocket-protocol": "triple, bearer.reader" } });
      assert.equal(sub.code, 1000, sub.reason);
      assert.equal(sub.responseHeaders?.["sec-websocket-protocol"], "triple");
    });

    it("an oversized message closes 1009", BOUNDED, async () => {
      const r = await h2wsCall(session, "/greet.GreetService/GreetStream", [Buffer.alloc(MAX_MESSAGE + 1, 0x20)], { end: "none" });
      assert.equal(r.code, 1009);
      assert.equal(r.messages.length, 0);
    });

    it("CONNECT without :protocol, another :protocol, or a version other than 13: refused before any WebSocket", BOUNDED, async () => {
      const ask = (headers: http2.OutgoingHttpHeaders) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const s = session.request(headers, { endStream: false });
          const chunks: Buffer[] = [];
          let status = 0;
          s.on("response", (h) => {
            status = Number(h[":status"]);
          });
          s.on("data", (c: Buffer) => chunks.push(c));
          s.on("end", () => resolve({ status, body: Buffer.concat(chunks).toString() }));
          s.on("error", reject);
        });
      const authority = new URL(server.url).host;
      const plain = await ask({ ":method": "CONNECT", ":authority": authority });
      assert.equal(plain.status, 501);
      assert.match(plain.body, /CONNECT without :protocol: this server is no proxy/);
      const base = { ":method": "CONNECT", ":scheme": secure ? "https" : "http", ":authority": authority, ":path": "/greet.GreetService/Greet" };
      const other = await ask({ ...base, ":protocol": "webtransport", "sec-websocket-version": "13" });
      assert.equal(other.status, 501);
      assert.match(other.body, /only :protocol websocket/);
      const v8 = await ask({ ...base, ":protocol": "websocket", "sec-websocket-version": "8" });
      assert.equal(v8.status, 400);
      assert.match(JSON.parse(v8.body).message, /sec-websocket-version "8" is not supported: send 13/);
    });

    it("an ordinary gRPC call on the same session beside an open WebSocket stream; a bystander is not disturbed", BOUNDED, async () => {
      const by = secure ? undefined : new Bystander(server.url);
      let grpcStatus: string | undefined;
      const r = await h2wsCall(session, "/greet.GreetService/GreetStream", ['{"name":"a"}'], {
        end: "none",
        onOpen: (w) => {
          const grpc = session.request({ ":method": "POST", ":path": "/greet.GreetService/Greet", "content-type": "application/grpc+json", te: "trailers" });
          const body = Buffer.from(JSON.stringify({ name: "triple" }));
          const frame = Buffer.alloc(5 + body.length);
          frame.writeUInt32BE(body.length, 1);
          body.copy(frame, 5);
          grpc.end(frame);
          grpc.on("trailers", (t) => {
            grpcStatus = String(t["grpc-status"]);
            // The WebSocket is still open on the same session: finish it now.
            w.send('{"name":"b"}');
            w.send("");
          });
          grpc.resume();
        },
      });
      assert.equal(grpcStatus, "0");
      assert.equal(r.code, 1000, r.reason);
      assert.equal(r.messages.length, 2);
      if (by) await by.assertResponsive(3_000);
    });

    describe("our Node client with httpVersion 2", () => {
      let ws: Client<GreetServiceImpl>;
      before(() => {
        ws = createClient(GreetServiceImpl, { providers: [server.url], protocol: "websocket", httpVersion: "2", retries: 0, ...(ca ? { tls: { ca } } : {}) });
      });
      after(() => closeClient(ws));

      it("the four call kinds over extended CONNECT, on one connection", BOUNDED, async () => {
        seen.length = 0;
        ports.length = 0;
        async function* names(...ns: string[]) {
          for (const n of ns) yield { name: n };
        }
        const [u, streamed, client, bidi] = await Promise.all([
          ws.greet({ name: "triple" }),
          (async () => {
            const got: string[] = [];
            for await (const m of ws.greetServerStream({ name: "s" })) got.push(m.greeting);
            return got;
          })(),
          ws.greetClientStream(names("a", "b")),
          (async () => {
            const got: string[] = [];
            for await (const m of ws.greetStream(names("x", "y", "z"))) got.push(m.greeting);
            return got;
          })(),
        ]);
        assert.deepEqual(u, { greeting: "triple" });
        assert.equal(streamed.length, 3);
        assert.ok(client);
        assert.deepEqual(bidi, ["x", "y", "z"]);
        assert.deepEqual([...new Set(seen.filter((x) => x.startsWith("triple-websocket")))], ["triple-websocket 2"]);
        assert.equal(ports.length, 4);
        assert.equal(new Set(ports).size, 1, `the four calls came from ports ${ports.join(", ")}: not one HTTP/2 connection`);
      });

      it("a refused CONNECT is read from the HTTP error body; a handler error from the close", BOUNDED, async () => {
        const c = createClient(GreetServiceImpl, {
          providers: [server.url],
          protocol: "websocket",
          httpVersion: "2",
          retries: 0,
          version: "9.9.9",
          ...(ca ? { tls: { ca } } : {}),
        });
        const err = await c.greet({ name: "triple" }).then(
          () => assert.fail("should fail"),
          (e: unknown) => e as RpcError,
        );
        closeClient(c);
        assert.ok(err instanceof RpcError);
        assert.equal(err.code, Code.Unimplemented);
        assert.match(err.message, /version "9.9.9"/);
      });
    });

    it("server shutdown closes an open WebSocket stream 1001", BOUNDED, async () => {
      const r = h2wsCall(session, "/h2ws.Slow/hold", ['"a"'], {
        end: "none",
        timeoutMs: 10_000,
        onOpen: () => {
          setTimeout(() => void server.close(), 300);
        },
      });
      const out = await r;
      assert.deepEqual(out.messages, ['"got a"']);
      assert.equal(out.code, 1001, out.reason);
      assert.match(out.reason, /^unavailable: /);
    });
  });
}

describe("our Node client with httpVersion 2, to a server that does not advertise extended CONNECT", () => {
  it("falls back to the HTTP/1.1 upgrade (a node:http2 server with allowHTTP1 and a mounted handler)", BOUNDED, async () => {
    const { key, cert } = selfSigned();
    const handler = createHandler({ services: [new GreetServiceImpl()] });
    const srv = http2.createSecureServer({ key, cert, allowHTTP1: true }, handler);
    let upgrades = 0;
    let connects = 0;
    srv.on("upgrade", (req, socket, head) => {
      upgrades++;
      if (!handler.onUpgrade(req, socket, head)) socket.destroy();
    });
    srv.on("stream", (_s, h) => {
      if (h[":method"] === "CONNECT") connects++;
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const port = (srv.address() as { port: number }).port;
    const c = createClient(GreetServiceImpl, {
      providers: [`https://127.0.0.1:${port}`],
      protocol: "websocket",
      httpVersion: "2",
      tls: { ca: cert },
      retries: 0,
    });
    try {
      assert.deepEqual(await c.greet({ name: "triple" }), { greeting: "triple" });
      assert.equal(upgrades, 1);
      assert.equal(connects, 0);
    } finally {
      closeClient(c);
      srv.close();
    }
  });
});
