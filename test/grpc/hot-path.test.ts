import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import * as protobuf from "protobufjs";
import { GREET_PROTO, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { encodeProtoFrame, encodeProtoMessage } from "../../src/codec/proto-codec.js";
import { encodeFrame } from "../../src/message/framing.js";
import { CallContext } from "../../src/runtime/context.js";
import { InflightCalls } from "../../src/runtime/inflight.js";
import { type CallContext as Ctx, createServer, Ctx as CtxParam, type Interceptor, Method, Param, Service, type TripleServer } from "../../src/index.js";
import type { MethodDescriptor } from "../../src/service/descriptors.js";
import type { Exchange } from "../../src/transport/server/exchange.js";
import { frame, rawCall } from "./raw.js";

const GREET = protobuf.loadSync(GREET_PROTO);
const Req = GREET.lookupType("greet.GreetRequest");
const Res = GREET.lookupType("greet.GreetResponse");

/** What the metadata services saw. */
const seen: Record<string, string | undefined> = {};

// Both implement greet.GreetService (the .proto names the service); they run on separate servers.
@Service("greet.GreetService", { proto: GREET_PROTO })
class WithCtx {
  @Method("Greet")
  greet(@Param() req: { name: string }, @CtxParam() ctx: Ctx): { greeting: string } {
    seen.withCtx = ctx.requestHeaders.get("x-who") as string | undefined;
    return { greeting: req.name };
  }
}

@Service("greet.GreetService", { proto: GREET_PROTO })
class NoCtx {
  @Method("Greet")
  greet(@Param() req: { name: string }): { greeting: string } {
    return { greeting: req.name };
  }
}

describe("gRPC unary hot path", () => {
  describe("InflightCalls (intrusive list)", () => {
    const md = { path: "/x/y" } as unknown as MethodDescriptor;
    const ctxs = Array.from({ length: 5 }, () => new CallContext(md, {}, "grpc", "2", { address: "", port: 0 }, undefined));
    const ex = (i: number) => ({ id: i }) as unknown as Exchange;

    it("adds, removes from head, middle and tail, and lists what is left", () => {
      const list = new InflightCalls();
      ctxs.forEach((c, i) => {
        list.add(c, ex(i));
      });
      assert.equal(list.size, 5);
      assert.equal(list.remove(ctxs[4]), true); // head (last added)
      assert.equal(list.remove(ctxs[2]), true); // middle
      assert.equal(list.remove(ctxs[0]), true); // tail
      assert.equal(list.size, 2);
      const left = list.entries().map(([c, e]) => [ctxs.indexOf(c), (e as unknown as { id: number }).id]);
      assert.deepEqual(left.sort(), [
        [1, 1],
        [3, 3],
      ]);
    });

    it("ignores a second remove and a second add of the same call", () => {
      const list = new InflightCalls();
      list.add(ctxs[0], ex(0));
      list.add(ctxs[0], ex(9));
      assert.equal(list.size, 1);
      assert.equal(list.remove(ctxs[0]), true);
      assert.equal(list.remove(ctxs[0]), false);
      assert.equal(list.size, 0);
      assert.deepEqual(list.entries(), []);
    });
  });

  describe("encodeProtoFrame (shared writer, one buffer)", () => {
    const md = { path: "/greet.GreetService/Greet", responseType: Res } as unknown as MethodDescriptor;

    it("matches framing the separately encoded message, for small and large messages", () => {
      for (const greeting of ["", "triple", "é".repeat(10), "x".repeat(70_000), "after the big one"]) {
        const framed = encodeProtoFrame(md, { greeting });
        assert.deepEqual(framed, encodeFrame(encodeProtoMessage(md, { greeting })), `greeting of ${greeting.length}`);
        assert.equal(framed.readUInt32BE(1), framed.length - 5);
      }
    });
  });

  describe("request headers after dispatch", () => {
    let server: TripleServer;
    let withCtx: TripleServer;
    let withInterceptor: TripleServer;
    let session: http2.ClientHttp2Session;
    let session1: http2.ClientHttp2Session;
    let session2: http2.ClientHttp2Session;
    const body = () => [frame(Req.encode({ name: "triple" }).finish())];

    before(async () => {
      server = createServer({ services: [new NoCtx(), { implementation: new GreetServiceImpl(), version: "2" }] });
      await server.listen({ port: 0 });
      withCtx = createServer({ services: [new WithCtx()] });
      await withCtx.listen({ port: 0 });
      const reading: Interceptor = (next) => async (call) => {
        seen.interceptor = call.context.requestHeaders.get("x-who") as string | undefined;
        // Read again after the handler: the headers must outlive dispatch when someone can see them.
        const out = await next(call);
        seen.interceptorAfter = call.context.requestHeaders.get("x-who") as string | undefined;
        return out;
      };
      withInterceptor = createServer({ services: [new NoCtx()], interceptors: [reading] });
      await withInterceptor.listen({ port: 0 });
      session = http2.connect(server.url);
      session1 = http2.connect(withCtx.url);
      session2 = http2.connect(withInterceptor.url);
    });

    after(async () => {
      session.close();
      session1.close();
      session2.close();
      await server.close();
      await withCtx.close();
      await withInterceptor.close();
    });

    it("a handler with @Ctx() reads them", async () => {
      const r = await rawCall(session1, "/greet.GreetService/Greet", body(), { "x-who": "ctx-reader" });
      assert.equal(r.grpcStatus, 0);
      assert.equal(seen.withCtx, "ctx-reader");
      assert.deepEqual(Res.decode(r.messages[0].payload).toJSON(), { greeting: "triple" });
    });

    it("an interceptor reads them before and after the handler", async () => {
      const r = await rawCall(session2, "/greet.GreetService/Greet", body(), { "x-who": "interceptor" });
      assert.equal(r.grpcStatus, 0);
      assert.equal(seen.interceptor, "interceptor");
      assert.equal(seen.interceptorAfter, "interceptor");
    });

    it("a handler that cannot see its context still answers, many calls at once, frames split or packed", async () => {
      const msg = frame(Req.encode({ name: "triple" }).finish());
      const shapes = [[msg], [msg.subarray(0, 3), msg.subarray(3)], [msg.subarray(0, 7), msg.subarray(7, 9), msg.subarray(9)]];
      const replies = await Promise.all(
        Array.from({ length: 300 }, (_, i) => rawCall(session, "/greet.GreetService/Greet", shapes[i % 3], i % 2 ? {} : { "tri-service-version": "2" })),
      );
      for (const r of replies) {
        assert.equal(r.grpcStatus, 0);
        assert.deepEqual(Res.decode(r.messages[0].payload).toJSON(), { greeting: "triple" });
      }
      assert.equal(server.inflightCount, 0);
    });

    it("two messages packed in one chunk for a unary method are refused", async () => {
      const msg = frame(Req.encode({ name: "triple" }).finish());
      const r = await rawCall(session, "/greet.GreetService/Greet", [Buffer.concat([msg, msg])]);
      assert.equal(r.grpcStatus, 13);
      assert.match(r.grpcMessage ?? "", /takes one request message/);
      assert.equal(server.inflightCount, 0);
    });
  });
});
