import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import * as zlib from "node:zlib";
import { createServer, type TripleServer } from "../../src/index.js";
import { TestServiceImpl } from "../../samples/interop/test-service.js";
import { decode, encode, frame, rawCall } from "./raw-grpc.js";

const UNARY = "/grpc.testing.TestService/UnaryCall";
const INPUT = "/grpc.testing.TestService/StreamingInputCall";
const EMPTY = "/grpc.testing.TestService/EmptyCall";

describe("gRPC framing on the wire against samples/interop (raw node:http2)", () => {
  let server: TripleServer;
  let h2: http2.ClientHttp2Session;
  before(async () => {
    server = createServer({ services: [new TestServiceImpl()] });
    await server.listen({ port: 0 });
    h2 = http2.connect(server.url);
    h2.on("error", () => {});
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  /** The same connection still serves calls: the bad one hurt nobody else. */
  async function stillServing(): Promise<void> {
    const r = await rawCall(h2, EMPTY, frame(Buffer.alloc(0)));
    assert.equal(r.status, 0, r.message);
    assert.equal(r.frames.length, 1);
  }

  const request = encode("SimpleRequest", { response_size: 3, payload: { body: Buffer.alloc(10) } });

  it("a declared length larger than the data, then END_STREAM, is internal (13)", async () => {
    const r = await rawCall(h2, UNARY, frame(request, 0, request.length + 100));
    assert.equal(r.status, 13, r.message);
    assert.equal(r.frames.length, 0);
    await stillServing();
  });

  it("a compressed flag without grpc-encoding is internal (13)", async () => {
    const r = await rawCall(h2, UNARY, frame(zlib.gzipSync(request), 1));
    assert.equal(r.status, 13, r.message);
    await stillServing();
  });

  it("a truncated frame header is internal (13)", async () => {
    const r = await rawCall(h2, UNARY, Buffer.from([0, 0, 0]));
    assert.equal(r.status, 13, r.message);
    await stillServing();
  });

  it("a truncated second frame of a client stream is internal (13)", async () => {
    const one = encode("StreamingInputCallRequest", { payload: { body: Buffer.alloc(8) } });
    const r = await rawCall(h2, INPUT, [frame(one), frame(one).subarray(0, 7)]);
    assert.equal(r.status, 13, r.message);
    await stillServing();
  });

  it("bytes that are not a SimpleRequest are internal (13) or invalid_argument (3)", async () => {
    const r = await rawCall(h2, UNARY, frame(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1])));
    assert.ok(r.status === 13 || r.status === 3, `status ${r.status}: ${r.message}`);
    await stillServing();
  });

  it("frames split into 1-byte chunks and packed together decode alike", async () => {
    const sizes = [27182, 8, 1828, 45904];
    const wire = Buffer.concat(sizes.map((n) => frame(encode("StreamingInputCallRequest", { payload: { body: Buffer.alloc(n) } }))));
    // The first 64 bytes one by one (headers torn everywhere), the rest in one write.
    const chunks = [...Array.from({ length: 64 }, (_, i) => wire.subarray(i, i + 1)), wire.subarray(64)];
    const r = await rawCall(h2, INPUT, chunks);
    assert.equal(r.status, 0, r.message);
    assert.equal(decode("StreamingInputCallResponse", r.frames[0].data).aggregated_payload_size, 74922);
  });

  it("gzip-compressed request frames are inflated per message", async () => {
    const r = await rawCall(h2, UNARY, frame(zlib.gzipSync(request), 1), { "grpc-encoding": "gzip" });
    assert.equal(r.status, 0, r.message);
  });

  it("an unknown grpc-encoding is unimplemented (12) with our grpc-accept-encoding", async () => {
    const r = await rawCall(h2, UNARY, frame(request, 1), { "grpc-encoding": "snappy" });
    assert.equal(r.status, 12, r.message);
    assert.match(String(r.trailers["grpc-accept-encoding"]), /gzip/);
    await stillServing();
  });

  it("a frame declaring more than 4 MiB is resource_exhausted (8) before the bytes arrive", async () => {
    const r = await rawCall(h2, UNARY, frame(Buffer.alloc(16), 0, 4 * 1024 * 1024 + 1));
    assert.equal(r.status, 8, r.message);
    await stillServing();
  });
});
