import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { clients, collect, grpc, unary } from "./grpc-js-client.js";
import { ProbeService } from "./probe-service.js";

describe("gRPC with @grpc/grpc-js as the client", () => {
  let server: TripleServer;
  let probe: ProbeService;
  let greet: any;
  let probeClient: any;
  let target: string;
  before(async () => {
    probe = new ProbeService();
    // grpc-js can cancel a call so early that it never resets the stream; bound close() anyway.
    server = createServer({ services: [new GreetServiceImpl(), probe], shutdownTimeoutMs: 500 });
    const a = await server.listen({ port: 0 });
    target = `127.0.0.1:${a.port}`;
    greet = new clients.greet(target, grpc.credentials.createInsecure());
    probeClient = new clients.probe(target, grpc.credentials.createInsecure());
  });
  after(async () => {
    greet.close();
    probeClient.close();
    await server.close();
  });

  describe("the four kinds on the greet sample", () => {
    it("unary Greet answers the greeting", async () => {
      const r = await unary(greet, "Greet", { name: "triple" });
      assert.equal(r.error, undefined);
      assert.deepEqual(r.response, { greeting: "triple" });
    });

    it("server streaming GreetServerStream sends three greetings then OK", async () => {
      const r = await collect(greet.GreetServerStream({ name: "ada" }));
      assert.equal(r.status.code, grpc.status.OK);
      assert.deepEqual(
        r.messages.map((m) => m.greeting),
        ["hello, ada (1/3)", "hello, ada (2/3)", "hello, ada (3/3)"],
      );
    });

    it("client streaming GreetClientStream joins the names", async () => {
      const r = await new Promise<any>((resolve, reject) => {
        const call = greet.GreetClientStream((e: Error | null, res: unknown) => (e ? reject(e) : resolve(res)));
        for (const name of ["a", "b", "c"]) call.write({ name });
        call.end();
      });
      assert.deepEqual(r, { greeting: "a, b, c" });
    });

    it("client streaming with no messages answers an empty greeting", async () => {
      const r = await new Promise<any>((resolve, reject) => {
        const call = greet.GreetClientStream((e: Error | null, res: unknown) => (e ? reject(e) : resolve(res)));
        call.end();
      });
      assert.deepEqual(r, { greeting: "" });
    });

    it("bidi GreetStream answers each request as it arrives (ping-pong)", async () => {
      const call = greet.GreetStream();
      const got: string[] = [];
      const next = () => new Promise<string>((resolve) => call.once("data", (m: any) => resolve(m.greeting)));
      for (const name of ["x", "y", "z"]) {
        const p = next();
        call.write({ name });
        got.push(await p);
      }
      const done = collect(call);
      call.end();
      const r = await done;
      assert.deepEqual(got, ["x", "y", "z"]);
      assert.equal(r.status.code, grpc.status.OK);
    });

    it("bidi with an immediate half-close ends OK with no messages (empty_stream)", async () => {
      const call = greet.GreetStream();
      const done = collect(call);
      call.end();
      const r = await done;
      assert.equal(r.status.code, grpc.status.OK);
      assert.equal(r.messages.length, 0);
    });
  });

  describe("errors", () => {
    it("a handler's plain Error is UNKNOWN (2) with its text", async () => {
      const r = await unary(greet, "Greet", { name: "nobody" });
      assert.equal(r.error?.code, grpc.status.UNKNOWN);
      assert.equal(r.error?.details, "name is not right: nobody");
    });

    it("an RpcError keeps code, message, metadata and details", async () => {
      const r = await unary(probeClient, "Fail", { text: "no such thing: é ✓ 100%", code: 5 });
      assert.equal(r.error?.code, grpc.status.NOT_FOUND);
      assert.equal(r.error?.details, "no such thing: é ✓ 100%");
      assert.deepEqual(r.error?.metadata.get("x-error-meta"), ["yes"]);
      const bin = r.error?.metadata.get("grpc-status-details-bin")[0] as Buffer;
      assert.ok(Buffer.isBuffer(bin) && bin.length > 0, "grpc-status-details-bin is present");
      assert.ok(bin.includes(Buffer.from("type.googleapis.com/probe.ProbeResponse")));
    });

    it("an error in a bidi stream after messages arrives in the trailers", async () => {
      const call = probeClient.Chat();
      const done = collect(call);
      call.write({ text: "one" });
      call.write({ text: "denied", code: 7 });
      call.end();
      const r = await done;
      assert.deepEqual(
        r.messages.map((m) => m.text),
        ["one"],
      );
      assert.equal(r.status.code, grpc.status.PERMISSION_DENIED);
      assert.equal(r.status.details, "denied");
    });

    it("unknown method and unknown service are UNIMPLEMENTED (12)", async () => {
      const c = new grpc.Client(target, grpc.credentials.createInsecure());
      const call = (path: string) =>
        new Promise<grpc.ServiceError>((resolve) =>
          c.makeUnaryRequest(
            path,
            (x: Buffer) => x,
            (x: Buffer) => x,
            Buffer.alloc(0),
            (e) => resolve(e!),
          ),
        );
      const m = await call("/greet.GreetService/Nope");
      const s = await call("/nope.Nope/Greet");
      c.close();
      assert.equal(m.code, grpc.status.UNIMPLEMENTED);
      assert.match(m.details, /method not found: Nope/);
      assert.equal(s.code, grpc.status.UNIMPLEMENTED);
      assert.match(s.details, /service not found: nope\.Nope/);
    });
  });

  describe("metadata", () => {
    it("custom metadata reaches the handler and comes back in headers and trailers, -bin included", async () => {
      const md = new grpc.Metadata();
      md.set("x-echo-initial", "hello");
      md.set("x-echo-trailing-bin", Buffer.from([0xab, 0xab, 0xab]));
      const r = await unary(probeClient, "Echo", { text: "m" }, { metadata: md });
      assert.equal(r.error, undefined);
      assert.deepEqual(r.headers?.get("x-header-initial"), ["hello"]);
      assert.deepEqual(r.headers?.get("x-header-trailing-bin"), [Buffer.from([0xab, 0xab, 0xab])]);
      assert.deepEqual(r.trailers?.get("x-trailer-initial"), ["hello"]);
      assert.deepEqual(r.trailers?.get("x-trailer-trailing-bin"), [Buffer.from([0xab, 0xab, 0xab])]);
    });
  });

  describe("deadlines and cancellation", () => {
    it("a deadline shorter than the handler is DEADLINE_EXCEEDED (4) and aborts the handler's signal", async () => {
      const r = await unary(probeClient, "Sleep", { text: "late", delay_ms: 2000 }, { deadline: 100 });
      assert.equal(r.error?.code, grpc.status.DEADLINE_EXCEEDED);
      await waitFor(() => probe.log.aborted.some((a) => a.startsWith("late:")));
    });

    it("cancelling a server stream aborts the handler's signal (cancel_after_first_response)", async () => {
      const call = probeClient.Ticks({ text: "cancel-me", count: 1000, delay_ms: 20 });
      await new Promise((resolve) => call.once("data", resolve));
      call.on("error", () => {});
      call.cancel();
      await waitFor(() => probe.log.aborted.includes("cancel-me:1"));
    });

    it("cancelling right after begin (cancel_after_begin) is CANCELLED and leaves the server healthy", async () => {
      const code = await new Promise<number>((resolve) => {
        const call = probeClient.Sum((e: grpc.ServiceError | null) => resolve(e ? e.code : 0));
        call.cancel();
      });
      assert.equal(code, grpc.status.CANCELLED);
      const r = await unary(greet, "Greet", { name: "triple" });
      assert.deepEqual(r.response, { greeting: "triple" });
    });
  });

  describe("compression", () => {
    it("gzip requests and responses both ways", async () => {
      const c = new clients.probe(target, grpc.credentials.createInsecure(), {
        "grpc.default_compression_algorithm": 2, // gzip
      });
      const payload = Buffer.alloc(64 * 1024, "abc");
      const r = await unary(c, "Echo", { text: "gz", payload });
      c.close();
      assert.equal(r.error, undefined);
      assert.equal(r.response.payload.length, payload.length);
      assert.ok(Buffer.from(r.response.payload).equals(payload));
    });

    it("deflate requests work too", async () => {
      const c = new clients.greet(target, grpc.credentials.createInsecure(), {
        "grpc.default_compression_algorithm": 1, // deflate
      });
      const r = await unary(c, "Greet", { name: "triple" });
      c.close();
      assert.deepEqual(r.response, { greeting: "triple" });
    });
  });

  describe("limits", () => {
    it("a message just under 4 MiB is accepted, one over is RESOURCE_EXHAUSTED (8)", async () => {
      const c = new clients.probe(target, grpc.credentials.createInsecure(), {
        "grpc.max_receive_message_length": 8 * 1024 * 1024,
      });
      const ok = await unary(c, "Echo", { payload: Buffer.alloc(4 * 1024 * 1024 - 64, 1) });
      const big = await unary(c, "Echo", { payload: Buffer.alloc(4 * 1024 * 1024 + 1, 1) });
      const after = await unary(c, "Echo", { text: "still fine" });
      c.close();
      assert.equal(ok.error, undefined);
      assert.equal(ok.response.payload.length, 4 * 1024 * 1024 - 64);
      assert.equal(big.error?.code, grpc.status.RESOURCE_EXHAUSTED);
      assert.match(big.error?.details ?? "", /exceeds the limit of 4194304 bytes/);
      assert.equal(after.response.text, "still fine");
    });
  });

  describe("one connection, many streams", () => {
    it("200 concurrent calls of all kinds on one channel all succeed", async () => {
      const jobs: Promise<void>[] = [];
      for (let i = 0; i < 50; i++) {
        jobs.push(unary(greet, "Greet", { name: "triple" }).then((r) => assert.deepEqual(r.response, { greeting: "triple" })));
        jobs.push(collect(greet.GreetServerStream({ name: `n${i}` })).then((r) => assert.equal(r.messages.length, 3)));
        jobs.push(
          new Promise<void>((resolve, reject) => {
            const call = greet.GreetClientStream((e: Error | null, res: any) => {
              if (e) return reject(e);
              assert.equal(res.greeting, `a${i}, b${i}`);
              resolve();
            });
            call.write({ name: `a${i}` });
            call.write({ name: `b${i}` });
            call.end();
          }),
        );
        jobs.push(
          new Promise<void>((resolve) => {
            const call = greet.GreetStream();
            collect(call).then((r) => {
              assert.deepEqual(
                r.messages.map((m) => m.greeting),
                [`p${i}`, `q${i}`],
              );
              resolve();
            });
            call.write({ name: `p${i}` });
            call.write({ name: `q${i}` });
            call.end();
          }),
        );
      }
      await Promise.all(jobs);
    });
  });
});

async function waitFor(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) assert.fail("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
