import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { gunzipSync, gzipSync } from "node:zlib";
import { after, before, describe, it } from "node:test";
import { GREET_PROTO, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { ClientStream, createServer, loadProto, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { decodeResponseWrapper, encodeRequestWrapper } from "../../src/message/wrapper.js";
import { decodeStatusDetails } from "../../src/protocol-grpc/status.js";
import { post1 } from "../helpers/http.js";
import { PROBE_PROTO, ProbeService } from "./probe-service.js";
import { frame, rawCall } from "./raw.js";
import { settled, waitFor } from "../helpers/wait.js";

/** An IDL-less service: its gRPC messages are the Triple wrapper or JSON. */
@Service("calc.Calculator")
class Calculator {
  @Method()
  add(@Param() a: number, @Param() b: number): number {
    return a + b;
  }

  @ClientStream()
  async total(@Param(Number) xs: AsyncIterable<number>): Promise<number> {
    let t = 0;
    for await (const x of xs) t += x;
    return t;
  }
}

const root = loadProto(GREET_PROTO);
const GreetRequest = root.lookupType("greet.GreetRequest");
const GreetResponse = root.lookupType("greet.GreetResponse");
const greetReq = (name: string) => Buffer.from(GreetRequest.encode({ name }).finish());
const greeting = (b: Buffer) => (GreetResponse.decode(b) as unknown as { greeting: string }).greeting;

describe("gRPC on the wire (raw node:http2 client)", () => {
  let server: TripleServer;
  let session: http2.ClientHttp2Session;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new ProbeService(), new Calculator()] });
    await server.listen({ port: 0 });
    session = http2.connect(server.url);
    session.on("error", () => {});
  });
  after(async () => {
    session.close();
    await server.close();
  });

  const ok = async () => {
    const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("triple"))]);
    assert.equal(r.grpcStatus, 0, "the server still answers after the bad call");
    assert.equal(greeting(r.messages[0].payload), "triple");
  };

  describe("framing", () => {
    it("a message split one byte per DATA frame is reassembled", async () => {
      const bytes = frame(greetReq("triple"));
      const r = await rawCall(
        session,
        "/greet.GreetService/Greet",
        [...bytes].map((b) => Buffer.from([b])),
      );
      assert.equal(r.status, 200);
      assert.equal(r.headers["content-type"], "application/grpc");
      assert.equal(r.grpcStatus, 0);
      assert.equal(greeting(r.messages[0].payload), "triple");
    });

    it("several messages packed into one chunk reach a client stream in order", async () => {
      const all = Buffer.concat(["a", "b", "c"].map((n) => frame(greetReq(n))));
      const r = await rawCall(session, "/greet.GreetService/GreetClientStream", [all.subarray(0, 7), all.subarray(7)]);
      assert.equal(r.grpcStatus, 0);
      assert.equal(greeting(r.messages[0].payload), "a, b, c");
    });

    it("a length larger than the data, then END_STREAM, is INTERNAL (13)", async () => {
      const bad = Buffer.concat([Buffer.from([0, 0, 0, 0, 100]), greetReq("triple")]);
      const r = await rawCall(session, "/greet.GreetService/Greet", [bad]);
      assert.equal(r.status, 200);
      assert.equal(r.grpcStatus, 13);
      assert.match(r.grpcMessage ?? "", /truncated/);
      assert.equal(r.data.length, 0, "trailers-only");
      await ok();
    });

    it("a truncated frame header is INTERNAL (13)", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [Buffer.from([0, 0, 0])]);
      assert.equal(r.grpcStatus, 13);
      await ok();
    });

    it("the compressed flag without grpc-encoding is INTERNAL (13)", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("triple"), 1)]);
      assert.equal(r.grpcStatus, 13);
      assert.match(r.grpcMessage ?? "", /compressed/);
      await ok();
    });

    it("reserved flag bits are INTERNAL (13)", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("triple"), 0x80)]);
      assert.equal(r.grpcStatus, 13);
      await ok();
    });

    it("two messages for a unary method are INTERNAL (13)", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("a")), frame(greetReq("b"))]);
      assert.equal(r.grpcStatus, 13);
      await ok();
    });

    it("no message for a unary method is INTERNAL (13)", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", []);
      assert.equal(r.grpcStatus, 13);
    });

    it("bytes that are not the request message are INTERNAL (13)", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(Buffer.from([0x0a, 0xff, 0xff]))]);
      assert.equal(r.grpcStatus, 13);
      await ok();
    });

    it("a length over the 4 MiB limit is RESOURCE_EXHAUSTED (8) as soon as the header arrives", async () => {
      const head = Buffer.from([0, 0, 0x50, 0, 0]); // 5 MiB announced, never sent
      const r = await rawCall(session, "/greet.GreetService/Greet", [head, Buffer.alloc(1000)]);
      assert.equal(r.grpcStatus, 8);
      await ok();
    });

    it("a gzip message over the limit once inflated is RESOURCE_EXHAUSTED (8)", async () => {
      const msg = Buffer.concat([Buffer.from([0x0a]), Buffer.from([0x80, 0x80, 0x80, 0x03]), Buffer.alloc(6 * 1024 * 1024, 97)]);
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(gzipSync(msg), 1)], { "grpc-encoding": "gzip" });
      assert.equal(r.grpcStatus, 8);
      await ok();
    });
  });

  describe("compression", () => {
    it("a gzip request gets gzip response messages (grpc-encoding and the compressed flag)", async () => {
      const Req = loadProto(PROBE_PROTO).lookupType("probe.ProbeRequest");
      const Res = loadProto(PROBE_PROTO).lookupType("probe.ProbeResponse");
      const body = Buffer.from(Req.encode({ text: "gz", payload: Buffer.alloc(8192, 3) }).finish());
      const r = await rawCall(session, "/probe.Probe/Echo", [frame(gzipSync(body), 1)], { "grpc-encoding": "gzip" });
      assert.equal(r.grpcStatus, 0);
      assert.equal(r.headers["grpc-encoding"], "gzip");
      assert.equal(r.messages[0].flags, 1);
      const res = Res.decode(gunzipSync(r.messages[0].payload)) as unknown as { payload: Buffer };
      assert.equal(res.payload.length, 8192);
    });

    it("small responses stay uncompressed, and identity requests get identity responses", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("triple"))], {
        "grpc-accept-encoding": "gzip",
      });
      assert.equal(r.grpcStatus, 0);
      assert.equal(r.messages[0].flags, 0);
    });
  });

  describe("status encoding", () => {
    it("trailers-only for an unknown method: :status 200, grpc-status 12, no DATA", async () => {
      const r = await rawCall(session, "/greet.GreetService/Nope", [frame(greetReq("x"))]);
      assert.equal(r.status, 200);
      assert.equal(r.headers["grpc-status"], "12");
      assert.equal(r.data.length, 0);
    });

    it("grpc-message is percent-encoded and details come as grpc-status-details-bin", async () => {
      const Req = loadProto(PROBE_PROTO).lookupType("probe.ProbeRequest");
      const body = Buffer.from(Req.encode({ text: "nö 100%\n", code: 9 }).finish());
      const r = await rawCall(session, "/probe.Probe/Fail", [frame(body)]);
      assert.equal(r.grpcStatus, 9);
      assert.equal(r.grpcMessage, "n%C3%B6 100%25%0A");
      const st = decodeStatusDetails(Buffer.from(r.headers["grpc-status-details-bin"] as string, "base64"));
      assert.equal(st.code, 9);
      assert.equal(st.message, "nö 100%\n");
      assert.equal(st.details[0].type, "type.googleapis.com/probe.ProbeResponse");
    });

    it("an unknown grpc-encoding is UNIMPLEMENTED (12) with our grpc-accept-encoding", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("triple"), 1)], {
        "grpc-encoding": "snappy",
      });
      assert.equal(r.grpcStatus, 12);
      assert.equal(r.headers["grpc-accept-encoding"], "gzip,deflate,identity");
      await ok();
    });

    it("a malformed grpc-timeout is rejected without running the handler", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("triple"))], { "grpc-timeout": "soon" });
      assert.equal(r.grpcStatus, 3);
    });

    it("grpc-timeout from the request is enforced by the server (4)", async () => {
      const Req = loadProto(PROBE_PROTO).lookupType("probe.ProbeRequest");
      const t = Date.now();
      const r = await rawCall(session, "/probe.Probe/Sleep", [frame(Req.encode({ text: "raw", delay_ms: 3000 }).finish())], {
        "grpc-timeout": "100m",
      });
      assert.equal(r.grpcStatus, 4);
      // One-sided: the handler ends no sooner than its 3 s, so an answer before that (less a
      // margin) came from the 100 ms deadline.
      assert.ok(Date.now() - t < 2900, `answered after ${Date.now() - t} ms`);
    });

    it("an unsupported content subtype is 415 with a grpc-status", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame(greetReq("x"))], {
        "content-type": "application/grpc+cbor",
      });
      assert.equal(r.status, 415);
      assert.equal(r.headers["grpc-status"], "13");
    });
  });

  describe("content types", () => {
    it("application/grpc+json carries ProtoJSON for a .proto method", async () => {
      const r = await rawCall(session, "/greet.GreetService/Greet", [frame('{"name":"triple"}')], {
        "content-type": "application/grpc+json",
      });
      assert.equal(r.grpcStatus, 0);
      assert.equal(r.headers["content-type"], "application/grpc+json");
      assert.deepEqual(JSON.parse(r.messages[0].payload.toString()), { greeting: "triple" });
    });

    it("application/grpc+json for an IDL-less method: a JSON array of arguments", async () => {
      const r = await rawCall(session, "/calc.Calculator/add", [frame("[2,3]")], { "content-type": "application/grpc+json" });
      assert.equal(r.grpcStatus, 0);
      assert.equal(r.messages[0].payload.toString(), "5");
    });

    it("application/grpc+json with wrongly typed arguments is INVALID_ARGUMENT (3)", async () => {
      const r = await rawCall(session, "/calc.Calculator/add", [frame('["2",3]')], { "content-type": "application/grpc+json" });
      assert.equal(r.grpcStatus, 3);
      assert.match(r.grpcMessage ?? "", /parameter #1/);
    });

    for (const ct of ["application/triple+wrapper", "application/grpc+proto", "application/grpc"]) {
      it(`${ct} with TripleRequestWrapper for an IDL-less method`, async () => {
        const req = encodeRequestWrapper({ serializeType: "json", args: [Buffer.from("40"), Buffer.from("2")], argTypes: [] });
        const r = await rawCall(session, "/calc.Calculator/Add", [frame(req)], { "content-type": ct });
        assert.equal(r.grpcStatus, 0);
        assert.equal(r.headers["content-type"], ct);
        const w = decodeResponseWrapper(r.messages[0].payload);
        assert.equal(w.serializeType, "json");
        assert.equal(Buffer.from(w.data).toString(), "42");
      });
    }

    it("a client stream of wrapped JSON values", async () => {
      const msgs = [1, 2, 3].map((n) => frame(encodeRequestWrapper({ serializeType: "json", args: [Buffer.from(String(n))], argTypes: [] })));
      const r = await rawCall(session, "/calc.Calculator/total", msgs, { "content-type": "application/triple+wrapper" });
      assert.equal(r.grpcStatus, 0);
      assert.equal(Buffer.from(decodeResponseWrapper(r.messages[0].payload).data).toString(), "6");
    });

    it("a .proto method's wrapper in fastjson2 (binary JSONB, not JSON text) or hessian2 is UNIMPLEMENTED (12), saying what it reads", async () => {
      for (const serializeType of ["fastjson2", "hessian4"]) {
        const req = encodeRequestWrapper({ serializeType, args: [Buffer.from('{"name":"triple"}')], argTypes: ["greet.GreetRequest"] });
        const r = await rawCall(session, "/greet.GreetService/Greet", [frame(req)], { "content-type": "application/triple+wrapper" });
        assert.equal(r.grpcStatus, 12, r.grpcMessage);
        assert.match(decodeURIComponent(r.grpcMessage ?? ""), new RegExp(`"${serializeType}".*a \\.proto method reads json and protobuf wrappers`));
      }
    });

    it("a wrapper with an unsupported serializeType is UNIMPLEMENTED (12)", async () => {
      const req = encodeRequestWrapper({ serializeType: "kryo", args: [Buffer.from("1"), Buffer.from("2")], argTypes: [] });
      const r = await rawCall(session, "/calc.Calculator/add", [frame(req)], { "content-type": "application/triple+wrapper" });
      assert.equal(r.grpcStatus, 12);
      assert.match(r.grpcMessage ?? "", /kryo/);
    });
  });

  describe("backpressure", () => {
    it("a slow reader holds the server stream back instead of it buffering everything", async () => {
      const probe = new ProbeService();
      const s = createServer({ services: [probe] });
      await s.listen({ port: 0 });
      const sess = http2.connect(s.url);
      const Req = loadProto(PROBE_PROTO).lookupType("probe.ProbeRequest");
      const body = frame(Req.encode({ text: "bp", count: 100, payload: Buffer.alloc(64 * 1024, 7) }).finish());
      const stream = sess.request({ ":method": "POST", ":path": "/probe.Probe/Ticks", "content-type": "application/grpc" });
      stream.pause();
      stream.end(body);
      // Until the server stops yielding (flow control holds it), not a fixed time.
      await waitFor(() => probe.log.ticksYielded > 0, 5000, "the first tick");
      const yieldedWhilePaused = await settled(() => probe.log.ticksYielded, 5000, "the ticks yielded while paused");
      let bytes = 0;
      stream.on("data", (c: Buffer) => (bytes += c.length));
      const closed = new Promise((r) => stream.on("close", r));
      stream.resume();
      await closed;
      sess.close();
      await s.close();
      assert.ok(yieldedWhilePaused < 50, `yielded ${yieldedWhilePaused} of 100 while the client read nothing`);
      assert.equal(probe.log.ticksYielded, 100);
      assert.ok(bytes >= 100 * 64 * 1024);
    });

    it("a slow handler pauses reading, so the client cannot push the whole stream", async () => {
      const s = createServer({ services: [new ProbeService()] });
      await s.listen({ port: 0 });
      const sess = http2.connect(s.url);
      sess.on("error", () => {});
      const Req = loadProto(PROBE_PROTO).lookupType("probe.ProbeRequest");
      const one = frame(Req.encode({ delay_ms: 200, payload: Buffer.alloc(64 * 1024, 1) }).finish());
      const stream = sess.request({ ":method": "POST", ":path": "/probe.Probe/Sum", "content-type": "application/grpc" });
      stream.on("error", () => {});
      for (let i = 0; i < 200; i++) stream.write(one);
      await new Promise((r) => setTimeout(r, 500));
      const pending = stream.writableLength;
      stream.close(http2.constants.NGHTTP2_CANCEL);
      sess.close();
      await s.close();
      assert.ok(pending > 6 * 1024 * 1024, `only ${pending} bytes still waiting on the client`);
    });
  });

  describe("HTTP/1.1", () => {
    it("a gRPC content type over HTTP/1.1 is 505 with a clear message", async () => {
      const r = await post1(server.url, "/greet.GreetService/Greet", {
        headers: { "content-type": "application/grpc" },
        body: frame(greetReq("triple")),
      });
      assert.equal(r.status, 505);
      assert.match(r.json().message, /needs HTTP\/2/);
    });
  });
});
