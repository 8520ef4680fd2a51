import * as grpc from "@grpc/grpc-js";
import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { clientStream, rejectsWith, stream, unary } from "./grpc-js-calls.js";
import { type Client, connectClients, zeros } from "./grpc-js-clients.js";
import { decode, encode, frame, rawCall, unframe } from "./raw-grpc.js";

/** A running target server. */
interface StartedTarget {
  /** `host:port` */
  address: string;
  close(): Promise<void>;
  /** Calls the server still works on, if it can tell. */
  inflight?: () => number;
}

/** A server the interop cases run against. */
export interface Target {
  name: string;
  start(): Promise<StartedTarget>;
  /** Cases this target cannot pass, by name, with the reason. */
  skip?: Record<string, string>;
}

const ECHO_INITIAL = "x-grpc-test-echo-initial";
const ECHO_TRAILING = "x-grpc-test-echo-trailing-bin";
/** The special_status_message text: whitespace, a BMP and a non-BMP character. */
export const SPECIAL_MESSAGE = "\t\ntest with whitespace\r\nand Unicode BMP ☺ and non-BMP 😈\t\n";

function assertZeros(body: Buffer, size: number): void {
  assert.equal(body.length, size);
  assert.ok(body.equals(Buffer.alloc(size)), "payload body is all zeros");
}

const largeRequest = (extra: object = {}) => ({
  response_type: "COMPRESSABLE",
  response_size: 314159,
  payload: { body: zeros(271828) },
  ...extra,
});

/**
 * The official gRPC interop client cases (grpc/grpc doc/interop-test-descriptions.md), with
 * `@grpc/grpc-js` as the client, against one target server.
 */
export function interopCases(target: Target): void {
  describe(`gRPC interop cases against ${target.name}`, () => {
    let server: StartedTarget;
    let clients: ReturnType<typeof connectClients>;
    let gzipClients: ReturnType<typeof connectClients>;
    let h2: http2.ClientHttp2Session;
    let test: Client;
    before(async () => {
      server = await target.start();
      clients = connectClients(server.address);
      gzipClients = connectClients(server.address, { "grpc.default_compression_algorithm": 2 });
      test = clients.test;
      h2 = http2.connect(`http://${server.address}`);
      h2.on("error", () => {});
    });
    after(async () => {
      clients.close();
      gzipClients.close();
      h2.close();
      await server.close();
    });

    /** The server ended the calls a client cancelled or let expire (where it can tell us). */
    const letGo = async () => {
      const inflight = server.inflight;
      if (!inflight) return;
      for (let i = 0; i < 100 && inflight() > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(inflight(), 0, "calls still in flight on the server");
    };

    const tcase = (name: string, fn: () => Promise<void>) => it(name, { skip: target.skip?.[name] }, fn);

    tcase("empty_unary", async () => {
      const { responses } = await unary(test, "emptyCall", {});
      assert.deepEqual(responses, [{}]);
    });

    tcase("large_unary", async () => {
      const { responses } = await unary(test, "unaryCall", largeRequest());
      assert.equal(responses[0].payload.type, "COMPRESSABLE");
      assertZeros(responses[0].payload.body, 314159);
    });

    tcase("client_compressed_unary", async () => {
      // The feature probe: an uncompressed request that expects compression is refused.
      await rejectsWith(unary(test, "unaryCall", largeRequest({ expect_compressed: { value: true } })), grpc.status.INVALID_ARGUMENT);
      const compressed = await unary(gzipClients.test, "unaryCall", largeRequest({ expect_compressed: { value: true } }));
      assertZeros(compressed.responses[0].payload.body, 314159);
      const plain = await unary(test, "unaryCall", largeRequest({ expect_compressed: { value: false } }));
      assertZeros(plain.responses[0].payload.body, 314159);
    });

    tcase("server_compressed_unary", async () => {
      // grpc-js hides message flags, so the response frames are read off a raw HTTP/2 stream.
      for (const compressed of [true, false]) {
        const body = encode("SimpleRequest", {
          response_size: 314159,
          payload: { body: zeros(271828) },
          response_compressed: { value: compressed },
        });
        const r = await rawCall(h2, "/grpc.testing.TestService/UnaryCall", frame(body), {
          "grpc-accept-encoding": "gzip",
        });
        assert.equal(r.status, 0, r.message);
        assert.equal(r.frames.length, 1);
        assert.equal(r.frames[0].flags & 1, compressed ? 1 : 0, `compressed flag when response_compressed=${compressed}`);
        if (compressed) assert.equal(r.headers["grpc-encoding"], "gzip");
        const res = decode("SimpleResponse", unframe(r.frames[0], r.headers["grpc-encoding"] as string));
        assertZeros(Buffer.from(res.payload.body), 314159);
      }
    });

    tcase("client_streaming", async () => {
      const sizes = [27182, 8, 1828, 45904];
      const { responses } = await clientStream(
        test,
        "streamingInputCall",
        sizes.map((n) => ({ payload: { body: zeros(n) } })),
      );
      assert.equal(responses[0].aggregated_payload_size, 74922);
    });

    tcase("client_compressed_streaming", async () => {
      await rejectsWith(
        clientStream(test, "streamingInputCall", [{ expect_compressed: { value: true }, payload: { body: zeros(27182) } }]),
        grpc.status.INVALID_ARGUMENT,
      );
      const { responses } = await clientStream(gzipClients.test, "streamingInputCall", [
        { expect_compressed: { value: true }, payload: { body: zeros(27182) } },
        { expect_compressed: { value: false }, payload: { body: zeros(45904) } },
      ]);
      assert.equal(responses[0].aggregated_payload_size, 73086);
    });

    tcase("server_streaming", async () => {
      const sizes = [31415, 9, 2653, 58979];
      const call = test.streamingOutputCall({
        response_type: "COMPRESSABLE",
        response_parameters: sizes.map((size) => ({ size })),
      });
      const { responses } = await stream(call);
      assert.equal(responses.length, 4);
      responses.forEach((r, i) => {
        assert.equal(r.payload.type, "COMPRESSABLE");
        assertZeros(r.payload.body, sizes[i]);
      });
    });

    tcase("server_compressed_streaming", async () => {
      const body = encode("StreamingOutputCallRequest", {
        response_parameters: [
          { compressed: { value: true }, size: 31415 },
          { compressed: { value: false }, size: 92653 },
        ],
      });
      const r = await rawCall(h2, "/grpc.testing.TestService/StreamingOutputCall", frame(body), {
        "grpc-accept-encoding": "gzip",
      });
      assert.equal(r.status, 0, r.message);
      assert.deepEqual(
        r.frames.map((f) => f.flags & 1),
        [1, 0],
      );
      const enc = r.headers["grpc-encoding"] as string;
      const sizes = r.frames.map((f) => Buffer.from(decode("StreamingOutputCallResponse", unframe(f, enc)).payload.body).length);
      assert.deepEqual(sizes, [31415, 92653]);
    });

    tcase("ping_pong", async () => {
      const requestSizes = [27182, 8, 1828, 45904];
      const responseSizes = [31415, 9, 2653, 58979];
      const call = test.fullDuplexCall();
      const send = (i: number) =>
        call.write({
          response_type: "COMPRESSABLE",
          response_parameters: [{ size: responseSizes[i] }],
          payload: { body: zeros(requestSizes[i]) },
        });
      const done = stream(call, (r, i) => {
        assertZeros(r.payload.body, responseSizes[i]);
        // Ping-pong: the next request goes out only after its predecessor's reply.
        if (i + 1 < requestSizes.length) send(i + 1);
        else call.end();
      });
      send(0);
      const { responses } = await done;
      assert.equal(responses.length, 4);
    });

    tcase("empty_stream", async () => {
      const call = test.fullDuplexCall();
      const done = stream(call);
      call.end();
      const { responses, status } = await done;
      assert.equal(status.code, grpc.status.OK);
      assert.equal(responses.length, 0);
    });

    tcase("custom_metadata", async () => {
      const md = () => {
        const m = new grpc.Metadata();
        m.set(ECHO_INITIAL, "test_initial_metadata_value");
        m.set(ECHO_TRAILING, Buffer.from("ababab", "hex"));
        return m;
      };
      const check = (o: { metadata: grpc.Metadata | undefined; status: grpc.StatusObject }) => {
        assert.deepEqual(o.metadata?.get(ECHO_INITIAL), ["test_initial_metadata_value"]);
        const t = o.status.metadata.get(ECHO_TRAILING);
        assert.equal(t.length, 1);
        assert.equal((t[0] as Buffer).toString("hex"), "ababab");
      };
      check(await unary(test, "unaryCall", largeRequest(), md()));
      const call = test.fullDuplexCall(md());
      const done = stream(call);
      call.write({ response_parameters: [{ size: 314159 }], payload: { body: zeros(271828) } });
      call.end();
      const duplex = await done;
      assert.equal(duplex.responses.length, 1);
      check(duplex);
    });

    for (const [name, message] of [
      ["status_code_and_message", "test status message"],
      ["special_status_message", SPECIAL_MESSAGE],
    ] as const) {
      tcase(name, async () => {
        const req = { response_status: { code: 2, message } };
        const e1 = await rejectsWith(unary(test, "unaryCall", req), grpc.status.UNKNOWN);
        assert.equal(e1.details, message);
        if (name === "special_status_message") return; // the official case is unary only
        const call = test.fullDuplexCall();
        const done = stream(call);
        call.write(req);
        call.end();
        const e2 = await rejectsWith(done, grpc.status.UNKNOWN);
        assert.equal(e2.details, message);
      });
    }

    tcase("unimplemented_method", async () => {
      await rejectsWith(unary(test, "unimplementedCall", {}), grpc.status.UNIMPLEMENTED);
    });

    tcase("unimplemented_service", async () => {
      await rejectsWith(unary(clients.unimplemented, "unimplementedCall", {}), grpc.status.UNIMPLEMENTED);
    });

    tcase("cancel_after_begin", async () => {
      const done = new Promise<grpc.ServiceError | null>((resolve) => {
        const call = test.streamingInputCall((e: grpc.ServiceError | null) => resolve(e));
        // A tick later, so the request headers are on the wire: grpc-js 1.14 sends the HEADERS of
        // a call cancelled synchronously but never resets that stream.
        setTimeout(() => call.cancel(), 20);
      });
      assert.equal((await done)?.code, grpc.status.CANCELLED);
      await letGo();
      // The server shrugs it off: the channel keeps working.
      await unary(test, "emptyCall", {});
    });

    tcase("cancel_after_first_response", async () => {
      const call = test.fullDuplexCall();
      const done = stream(call, () => call.cancel());
      call.write({
        response_type: "COMPRESSABLE",
        response_parameters: [{ size: 31415 }],
        payload: { body: zeros(27182) },
      });
      const err = await rejectsWith(done, grpc.status.CANCELLED);
      assert.ok(err);
      await letGo();
      await unary(test, "emptyCall", {});
    });

    tcase("timeout_on_sleeping_server", async () => {
      const call = test.fullDuplexCall({ deadline: Date.now() + 1 });
      const done = stream(call);
      call.write({ payload: { body: zeros(27182) } });
      await rejectsWith(done, grpc.status.DEADLINE_EXCEEDED);
      await letGo();
      await unary(test, "emptyCall", {});
    });

    tcase("half_duplex", async () => {
      const sizes = [31415, 9, 2653];
      const call = test.halfDuplexCall();
      let halfClosed = false;
      const done = stream(call, () => assert.ok(halfClosed, "no response before the client half-closes"));
      for (const size of sizes) call.write({ response_parameters: [{ size }] });
      halfClosed = true;
      call.end();
      const { responses } = await done;
      assert.deepEqual(
        responses.map((r) => r.payload.body.length),
        sizes,
      );
    });

    tcase("interval_us", async () => {
      const t0 = Date.now();
      const call = test.streamingOutputCall({
        response_parameters: [
          { size: 1, interval_us: 100_000 },
          { size: 2, interval_us: 100_000 },
        ],
      });
      const { responses } = await stream(call);
      assert.equal(responses.length, 2);
      assert.ok(Date.now() - t0 >= 190, `two 100 ms intervals took ${Date.now() - t0} ms`);
    });

    tcase("many concurrent streams on one connection", async () => {
      // One grpc-js channel is one HTTP/2 connection: 100 bidi streams and 100 unary calls at once.
      const bidi = Array.from({ length: 100 }, async (_, i) => {
        const call = test.fullDuplexCall();
        const done = stream(call);
        for (let k = 0; k < 3; k++) call.write({ response_parameters: [{ size: i + k }] });
        call.end();
        const { responses } = await done;
        assert.deepEqual(
          responses.map((r) => r.payload.body.length),
          [i, i + 1, i + 2],
        );
      });
      const unaries = Array.from({ length: 100 }, async (_, i) => {
        const { responses } = await unary(test, "unaryCall", { response_size: 1000 + i });
        assert.equal(responses[0].payload.body.length, 1000 + i);
      });
      await Promise.all([...bidi, ...unaries]);
    });

    tcase("4 MiB messages: just under the limit pass both ways", async () => {
      const n = 4 * 1024 * 1024 - 64;
      const { responses } = await unary(test, "unaryCall", { response_size: n, payload: { body: zeros(n) } });
      assertZeros(responses[0].payload.body, n);
    });

    tcase("4 MiB messages: a request over the limit is resource_exhausted", async () => {
      const n = 4 * 1024 * 1024 + 1;
      await rejectsWith(unary(test, "unaryCall", { response_size: 1, payload: { body: zeros(n) } }), grpc.status.RESOURCE_EXHAUSTED);
      await unary(test, "emptyCall", {});
    });
  });
}
