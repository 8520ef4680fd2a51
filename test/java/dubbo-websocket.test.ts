import * as assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import type { IncomingHttpHeaders } from "node:http";
import { after, before, describe, it } from "node:test";
import { WebSocket } from "ws";
import { type Client, Code, closeClient, createClient, Method, Param, RpcError, Service, unimplemented } from "../../src/index.js";
import { waitForListening } from "../helpers/child.js";
import { freePort } from "../helpers/zookeeper.js";
import { Interop, QUIET } from "./dubbo-interop.js";
import { dubboJavaSkip, JavaProvider, requireDubboJava } from "./dubbo-peer.js";
import { compiledProtoPrograms, PbGreeter, protoMissing, startProtoJava, stopProtoJava } from "./dubbo-proto-peer.js";

/**
 * Triple over WebSocket against a real Dubbo Java provider: Dubbo's WebSocket transport is
 * unreleased (apache/dubbo branch 3.3-websocket-support, PR #14390), so the fixture carries it as
 * dubbo-3.3-websocket-overlay.jar, compiled from that branch at commit
 * bf9cc6a7c7e22794930975b58efe57e6dcb482b5 on top of the 3.3.1 jars (test/fixtures/dubbo-java:
 * README and recipe/build-websocket.sh). The same Java programs as the other Java tests
 * (JavaProvider of org.triplerpc.interop.Interop, PbProvider of pbgreet.proto) run with that jar
 * first on their class path. Our Node client (`protocol: "websocket"`) calls them, and the `ws`
 * library directly where the framing shows better raw.
 *
 * The Java source lines quoted below are from apache/dubbo at bf9cc6a7c7 ("WebSocketFrameCodec" is
 * dubbo-remoting/dubbo-remoting-websocket/src/main/java/org/apache/dubbo/remoting/websocket/netty4/
 * WebSocketFrameCodec.java; "DefaultWebSocketServerTransportListener" is dubbo-rpc/dubbo-rpc-triple/
 * src/main/java/org/apache/dubbo/rpc/protocol/tri/websocket/DefaultWebSocketServerTransportListener.java;
 * "TripleHttp2Protocol" is dubbo-rpc/dubbo-rpc-triple/src/main/java/org/apache/dubbo/rpc/protocol/tri/
 * TripleHttp2Protocol.java).
 */

const INTEROP = "/org.triplerpc.interop.Interop";
const JSON_CT = { "content-type": "application/json" };

/** What one raw WebSocket call saw. */
interface Raw {
  /** The 101's headers (undefined when the handshake did not complete). */
  upgrade?: IncomingHttpHeaders;
  messages: { binary: boolean; data: Buffer }[];
  code: number;
  reason: string;
  /** ws's error, if any (a handshake it refused, a frame it could not read). */
  error?: string;
}

interface RawOpts {
  headers?: Record<string, string>;
  protocols?: string[];
  /** Close 1000 after sending (Dubbo's end of the request side). */
  close?: boolean;
  /** Offer permessage-deflate, compressing every message. */
  deflate?: boolean;
}

/** One call on a raw `ws` WebSocket (no triple-rpc code): strings go as text messages, Buffers as binary. */
function raw(port: number, path: string, send: readonly (string | Buffer)[], opts: RawOpts = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, opts.protocols ?? [], {
      headers: opts.headers,
      perMessageDeflate: opts.deflate ? { threshold: 0 } : false,
    });
    const out: Raw = { messages: [], code: 0, reason: "" };
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`${path}: the Java provider did not close within 10 s; got ${out.messages.length} messages`));
    }, 10_000);
    ws.on("upgrade", (res) => {
      out.upgrade = res.headers;
    });
    ws.on("open", () => {
      for (const m of send) ws.send(m, { binary: typeof m !== "string" });
      if (opts.close) ws.close(1000);
    });
    ws.on("message", (data, binary) => out.messages.push({ binary, data: data as Buffer }));
    ws.on("error", (e) => {
      out.error = e.message;
    });
    ws.on("close", (code, reason) => {
      clearTimeout(timer);
      resolve({ ...out, code, reason: reason.toString() });
    });
  });
}

/** The messages as text, each marked "b:" (binary) or "t:" (text). */
const texts = (r: Raw) => r.messages.map((m) => `${m.binary ? "b" : "t"}:${m.data.toString("utf8")}`);

/** Waits (a few seconds at most) for `ok`: a child's output arrives after the socket's close. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(ok(), "not seen within 5 s");
}

const isRpc = (code: Code, message: RegExp) => (e: unknown) => {
  assert.ok(e instanceof RpcError, String(e));
  assert.equal(e.code, code, e.message);
  assert.match(e.message, message);
  return true;
};

/** A method the Java provider does not have, on its service's name. */
@Service("org.triplerpc.interop.Interop")
class InteropPlus {
  @Method("nope")
  nope(@Param({ name: "x", type: String }) _x: string): Promise<string> {
    return unimplemented();
  }
}

describe("Triple over WebSocket with Dubbo Java (branch 3.3-websocket-support over 3.3.1)", { skip: dubboJavaSkip() }, () => {
  let java: JavaProvider;
  let port: number;
  let c: Client<Interop>;
  before(async () => {
    requireDubboJava();
    java = await JavaProvider.start(await freePort(), {}, [], { websocket: true });
    port = java.port;
    c = createClient(Interop, { providers: [java.url], protocol: "websocket", retries: 0, timeoutMs: 15_000, logger: QUIET });
  });
  after(async () => {
    if (c) await closeClient(c);
    await java?.stop();
  });

  it("server stream: our client reads count(3) as #0, #1, #2, then Java's close 1000", async () => {
    // (Over HTTP, Dubbo 3.3.1 cannot read a JSON stream without its wrapper; over WebSocket each
    // message is one JSON value.)
    const got: string[] = [];
    for await (const s of c.count(3)) got.push(s);
    assert.deepEqual(got, ["#0", "#1", "#2"]);
    // Multi-parameter methods bind from our JSON argument array: 1 + 2 + 3.5 + 1 + "abc".length, as a long.
    assert.equal(await c.mix(1, 2n, 3.5, true, "abc"), 10n);
  });

  it("framing (ws): no subprotocol selected, one bare binary message per answer, close 1000 Bye", async () => {
    // WebSocketFrameCodec.onHandshakeComplete: the request URI is the call's path, the handshake's
    // headers its metadata:
    //   httpHeaders.set(HttpHeaderNames.PATH.getName(), evt.requestUri());
    //   httpHeaders.set(HttpHeaderNames.METHOD.getName(), HttpMethods.POST.name());
    // TripleHttp2Protocol.buildWebSocketServerProtocolHandler gives WebSocketServerProtocolConfig no
    // subprotocols, so the 101 selects none.
    const r = await raw(port, `${INTEROP}/count`, ["3"], { headers: JSON_CT });
    assert.equal(r.upgrade?.["sec-websocket-protocol"], undefined);
    // WebSocketFrameCodec.encodeWebSocketFrame: each response message is one binary frame, bare
    // (no gRPC 5-byte prefix): `return new BinaryWebSocketFrame(buffer);`
    assert.deepEqual(texts(r), ['b:"#0"', 'b:"#1"', 'b:"#2"']);
    // encodeCloseWebSocketFrame: `WebSocketCloseStatus status = WebSocketCloseStatus.NORMAL_CLOSURE;`
    // (netty's 1000 "Bye") unless the status is not 200.
    assert.deepEqual([r.code, r.reason], [1000, "Bye"]);
    // A subprotocol offered (our client offered "triple" until it met this) fails the handshake in ws.
    const offered = await raw(port, `${INTEROP}/count`, ["1"], { headers: JSON_CT, protocols: ["triple"] });
    assert.equal(offered.error, "Server sent no subprotocol");
    // DefaultWebSocketServerTransportListener: a unary (and server-stream) call's request side ends with
    // its first message (`autoClose = true;` in prepareUnaryServerCall; onDataCompletion then
    // `getStreamingDecoder().close();`): a second message is not read.
    const two = await raw(port, `${INTEROP}/hello`, ['"a"', '"b"'], { headers: JSON_CT });
    assert.equal(two.messages.length, 1);
    assert.match(two.messages[0]?.data.toString() ?? "", /^"hello a from /);
    assert.equal(two.code, 1000);
  });

  it("an error closes 1011 with Java's bare message: our client reads RpcError unknown", async () => {
    // DefaultWebSocketServerTransportListener.customizeWebSocketStatus:
    //   httpHeaders.set(WebSocketHeaderNames.WEBSOCKET_MESSAGE.getName(), throwable.getMessage());
    // WebSocketFrameCodec.encodeCloseWebSocketFrame: a status other than 200 closes with
    //   new WebSocketCloseStatus(WebSocketCloseStatus.INTERNAL_SERVER_ERROR.code(), <that message>)
    // No code name precedes the message (ours sends "<code name>: <message>"), so our client falls back to unknown.
    await assert.rejects(c.addDecimal("1.5", "zz"), isRpc(Code.Unknown, /^Character z is neither a decimal digit number/));
    const r = await raw(port, `${INTEROP}/fail`, ['"illegal"'], { headers: JSON_CT });
    assert.deepEqual([r.code, r.reason, r.messages.length], [1011, "bad kind: illegal", 0]);
  });

  it("an unknown method: Java completes the upgrade, then closes 1011 Invoker not found", async () => {
    // Routing runs after the handshake (DefaultWebSocketServerTransportListener.onPrepareMetadata →
    // doRoute, on the metadata onHandshakeComplete made), where Dubbo 3.3.1 (tag dubbo-3.3.1,
    // dubbo-rpc/dubbo-rpc-triple/src/main/java/org/apache/dubbo/rpc/protocol/tri/h12/AbstractServerTransportListener.java:128)
    //   throw new HttpStatusException(HttpStatus.NOT_FOUND.getCode(), "Invoker not found");
    // which becomes the close reason. (Our server answers 404 before upgrading.)
    const r = await raw(port, `${INTEROP}/nope`, ['"x"'], { headers: JSON_CT });
    assert.ok(r.upgrade, "the handshake completed");
    assert.deepEqual([r.code, r.reason], [1011, "Invoker not found"]);
    const unknownService = await raw(port, "/org.example.Nothing/nope", ["[]"], { headers: JSON_CT });
    assert.deepEqual([unknownService.code, unknownService.reason], [1011, "Invoker not found"]);
    const plus = createClient(InteropPlus, { providers: [java.url], protocol: "websocket", retries: 0, timeoutMs: 15_000, logger: QUIET });
    try {
      await assert.rejects(plus.nope("x"), isRpc(Code.Unknown, /^Invoker not found$/));
    } finally {
      await closeClient(plus);
    }
  });

  it("client stream and bidi (ws): Java ends the request side at close 1000", async () => {
    // WebSocketFrameCodec.onCloseFrame: 1000 is the end of the request side, any other code a reset:
    //   if (closeWebSocketFrame.statusCode() != WebSocketCloseStatus.NORMAL_CLOSURE.code()) {
    //       return new DefaultHttp2ResetFrame(closeWebSocketFrame.statusCode());
    //   }
    //   return new Http2InputMessageFrame(StreamUtils.EMPTY, true);
    // ws still delivers what the server sends after our close frame, until the server's own close.
    const total = await raw(port, `${INTEROP}/total`, [Buffer.from("1"), "2", "[3]"], { headers: JSON_CT, close: true });
    assert.deepEqual([texts(total), total.code], [["b:6"], 1000]);
    const rename = await raw(port, `${INTEROP}/rename`, ['{"name":"ann","age":3}', '{"name":"bob","age":4}'], { headers: JSON_CT, close: true });
    const names = rename.messages.map((m) => JSON.parse(m.data.toString()) as { name: string; age: number });
    assert.deepEqual(
      names.map((p) => `${p.name}/${p.age}`),
      ["ann?/3", "bob?/4"],
    );
    assert.equal(rename.code, 1000);
  });

  it("our client's client stream and bidi do not interoperate: Java reads our end-of-request empty text as a message", async () => {
    // Our client ends the request side with an empty text message (close 1000 would lose the answer
    // in a browser). WebSocketFrameCodec.onDataFrame hands every text or binary frame on as a message
    // (`new FinalFragmentByteBufInputStream(data, true, webSocketFrame.isFinalFragment())`), the empty
    // one too, and Dubbo's JSON codec binds it as null: total's `sum += x` throws.
    await assert.rejects(
      c.total(
        (async function* () {
          yield 1;
          yield 2;
        })(),
      ),
      isRpc(Code.Unknown, /java\.lang\.Integer\.intValue\(\).*is null/),
    );
    // rename answers the null Person ("null?") and, the request side never ended, Java keeps the call open.
    const got: string[] = [];
    for await (const p of c.rename(
      (async function* () {
        yield { name: "ann", age: 3, id: 1n, score: 0, active: false };
      })(),
    )) {
      got.push(`${p.name}`);
      if (got.length === 2) break; // the call would otherwise run to its deadline
    }
    assert.deepEqual(got, ["ann?", "null?"]);
  });

  it("our client with websocket.endOfRequest close: client stream and bidi interoperate", async () => {
    // Java's end of the request side is a close with 1000 (WebSocketFrameCodec.onCloseFrame, quoted
    // above); ws reads what Java sends after it, until Java's own close.
    const j = createClient(Interop, {
      providers: [java.url],
      protocol: "websocket",
      websocket: { endOfRequest: "close" },
      retries: 0,
      timeoutMs: 15_000,
      logger: QUIET,
    });
    try {
      const sum = await j.total(
        (async function* () {
          yield 1;
          yield 2;
          yield 3;
        })(),
      );
      assert.equal(sum, 6);
      const got: string[] = [];
      for await (const p of j.rename(
        (async function* () {
          yield { name: "ann", age: 3, id: 1n, score: 0, active: false };
          yield { name: "bob", age: 4, id: 2n, score: 0, active: false };
        })(),
      ))
        got.push(`${p.name}/${p.age}`);
      assert.deepEqual(got, ["ann?/3", "bob?/4"]);
    } finally {
      await closeClient(j);
    }
  });

  it("a single String parameter binds the text of the message, as Dubbo 3.3.1 does over HTTP", async () => {
    // Our client sends `["ws"]` (Dubbo's argument array); Java gives a lone String parameter the
    // message's text, as its REST layer gives it the whole body of a Triple JSON call over HTTP
    // (test/java/dubbo-provider.test.ts). A bare JSON string binds as the value.
    assert.match(await c.hello("ws"), /^hello \["ws"\] from /);
    const bare = await raw(port, `${INTEROP}/hello`, ['"ws"'], { headers: JSON_CT });
    assert.match(texts(bare)[0] ?? "", /^b:"hello ws from /);
  });

  it("permessage-deflate (ws): Java accepts the offer in its 101, then refuses a compressed message (close 1002)", async () => {
    // TripleHttp2Protocol adds `new WebSocketServerCompressionHandler()` (which accepts the offer) but
    // builds its decoder with `WebSocketDecoderConfig.newBuilder().maxFramePayloadLength(…).build()`,
    // without allowExtensions(true): netty's frame decoder then refuses any frame with RSV bits set.
    // Our client (and server) never offer compression.
    const r = await raw(port, `${INTEROP}/count`, ["2"], { headers: JSON_CT, deflate: true });
    assert.equal(r.upgrade?.["sec-websocket-extensions"], "permessage-deflate");
    assert.deepEqual([r.code, r.reason, r.messages.length], [1002, "RSV != 0 and no extension negotiated, RSV:4", 0]);
  });
});

const pbSkip = dubboJavaSkip() || (protoMissing() !== undefined && !process.env.CI ? `protoc or the Dubbo Java peer unavailable: ${protoMissing()}` : false);

describe("a .proto service over WebSocket with Dubbo Java (branch 3.3-websocket-support)", { skip: pbSkip }, () => {
  let provider: ChildProcess | undefined;
  let port: number;
  let stderr = "";
  before(async () => {
    requireDubboJava();
    const why = protoMissing();
    if (why !== undefined) throw new Error(`the Dubbo protobuf tests cannot run (and CI is set, so they fail rather than skip): ${why}`);
    port = await freePort();
    provider = await startProtoJava(await compiledProtoPrograms(), "org.triplerpc.pb.PbProvider", [String(port)], { websocket: true });
    await waitForListening(provider, "the Dubbo Java protobuf provider", 60_000);
    provider.stderr?.on("data", (b: Buffer) => {
      stderr = (stderr + b.toString("utf8")).slice(-50_000);
    });
  });
  after(() => stopProtoJava(provider));

  const req = { name: "ann", id: 5, tags: ["a", "é"] };

  it("our client, JSON (ProtoJSON): unary and server stream", async () => {
    const c = createClient(PbGreeter, { providers: [`http://127.0.0.1:${port}`], protocol: "websocket", retries: 0, timeoutMs: 15_000, logger: QUIET });
    try {
      assert.deepEqual({ ...(await c.hello(req)) }, { message: "hello ann from java", id: "6", tags: 2 });
      const got: string[] = [];
      for await (const m of c.helloStream(req)) got.push(`${m.message}|${m.id}|${m.tags}`);
      assert.deepEqual(
        got,
        [1, 2, 3].map((i) => `hello ann from java #${i}|6|2`),
      );
    } finally {
      await closeClient(c);
    }
  });

  it("our client, contentType proto: Java upgrades, then closes 1011 (no codec for application/proto)", async () => {
    // Dubbo 3.3.1 reads protobuf messages only as application/grpc(+proto) (MediaType.APPLICATION_GRPC_PROTO);
    // the codec is chosen after the upgrade, so the refusal is a close, not an HTTP 415.
    const c = createClient(PbGreeter, {
      providers: [`http://127.0.0.1:${port}`],
      protocol: "websocket",
      contentType: "proto",
      retries: 0,
      timeoutMs: 15_000,
      logger: QUIET,
    });
    try {
      await assert.rejects(c.hello(req), isRpc(Code.Unknown, /^Unsupported Media Type 'application\/proto'$/));
    } finally {
      await closeClient(c);
    }
  });

  it("binary protobuf (ws, application/grpc+proto): Java fails to decode it, 1011 Internal Server Error", async () => {
    // HelloRequest{name: "ann", id: 5, tags: ["a"]}, encoded by hand, sent bare as one binary message.
    const hello = Buffer.from([0x0a, 3, ...Buffer.from("ann"), 0x10, 5, 0x1a, 1, 0x61]);
    const r = await raw(port, "/org.triplerpc.pb.PbGreeter/hello", [hello], { headers: { "content-type": "application/grpc+proto" } });
    assert.deepEqual([r.code, r.reason, r.messages.length], [1011, "Internal Server Error", 0]);
    // The WebSocket listener is Dubbo's generic HTTP one (DefaultWebSocketServerTransportListener extends
    // GenericHttp2ServerTransportListener); only gRPC's listener gives GrpcCompositeCodec its method, so
    // Java logs (Dubbo 3.3.1, GrpcCompositeCodec.java:98):
    //   java.lang.NullPointerException: Cannot invoke "org.apache.dubbo.rpc.model.PackableMethod.parseRequest(byte[])"
    //   because "this.packableMethod" is null
    await until(() => stderr.includes('because "this.packableMethod" is null'));
  });
});
