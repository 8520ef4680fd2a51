import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import type { Transport } from "@connectrpc/connect";
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { TestServiceImpl } from "../../samples/interop/test-service.js";
import { SPECIAL_MESSAGE } from "./cases.js";
import { interopServices } from "./connect-descriptors.js";

const zeros = (n: number) => new Uint8Array(n);

async function* items<T>(...xs: T[]): AsyncIterable<T> {
  yield* xs;
}

async function expectCode(p: Promise<unknown>, code: Code): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    const err = ConnectError.from(e);
    assert.equal(err.code, code, `expected ${Code[code]}, got ${Code[err.code]}: ${err.rawMessage}`);
    return err;
  }
  throw new Error(`expected ${Code[code]}, but the call succeeded`);
}

/** One way connect-node reaches the server: a protocol, a message format and an HTTP version. */
interface Way {
  name: string;
  http: "1.1" | "2";
  make(baseUrl: string): Transport;
}

const WAYS: Way[] = [
  { name: "gRPC, HTTP/2", http: "2", make: (baseUrl) => createGrpcTransport({ baseUrl }) },
  { name: "Connect JSON, HTTP/2", http: "2", make: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false }) },
  { name: "Connect binary, HTTP/2", http: "2", make: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }) },
  { name: "Connect JSON, HTTP/1.1", http: "1.1", make: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }) },
  { name: "Connect binary, HTTP/1.1", http: "1.1", make: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }) },
  { name: "gRPC-Web binary, HTTP/2", http: "2", make: (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }) },
  { name: "gRPC-Web JSON, HTTP/2", http: "2", make: (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2", useBinaryFormat: false }) },
  { name: "gRPC-Web binary, HTTP/1.1", http: "1.1", make: (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }) },
];

for (const way of WAYS) {
  // Bidi streams need HTTP/2 in every protocol; over HTTP/1.1 the bidi cases do not apply.
  const bidi = way.http === "2" ? it : it.skip;
  describe(`gRPC interop cases with @connectrpc/connect-node (${way.name}) against samples/interop`, () => {
    const services = interopServices();
    let server: TripleServer;
    let client: any;
    let unimplemented: any;
    before(async () => {
      server = createServer({ services: [new TestServiceImpl()] });
      await server.listen({ port: 0 });
      const transport = way.make(server.url);
      client = createClient(services.test, transport);
      unimplemented = createClient(services.unimplemented, transport);
    });
    after(() => server.close());

    it("empty_unary", async () => {
      const res = await client.emptyCall({});
      assert.equal(res.$typeName, "grpc.testing.Empty");
    });

    it("large_unary", async () => {
      const res = await client.unaryCall({ responseSize: 314159, payload: { body: zeros(271828) } });
      assert.equal(res.payload.body.length, 314159);
      assert.ok(res.payload.body.every((b: number) => b === 0));
    });

    it("client_streaming", async () => {
      const sizes = [27182, 8, 1828, 45904];
      const res = await client.streamingInputCall(items(...sizes.map((n) => ({ payload: { body: zeros(n) } }))));
      assert.equal(res.aggregatedPayloadSize, 74922);
    });

    it("server_streaming", async () => {
      const sizes = [31415, 9, 2653, 58979];
      const got: number[] = [];
      for await (const r of client.streamingOutputCall({ responseParameters: sizes.map((size) => ({ size })) })) {
        got.push(r.payload.body.length);
      }
      assert.deepEqual(got, sizes);
    });

    bidi("ping_pong", async () => {
      const requestSizes = [27182, 8, 1828, 45904];
      const responseSizes = [31415, 9, 2653, 58979];
      // The request stream waits for each reply before sending the next request.
      let replied: () => void = () => {};
      async function* requests() {
        for (let i = 0; i < 4; i++) {
          const next = new Promise<void>((r) => (replied = r));
          yield { responseParameters: [{ size: responseSizes[i] }], payload: { body: zeros(requestSizes[i]) } };
          await next;
        }
      }
      const got: number[] = [];
      for await (const r of client.fullDuplexCall(requests())) {
        got.push(r.payload.body.length);
        replied();
      }
      assert.deepEqual(got, responseSizes);
    });

    bidi("empty_stream", async () => {
      const got: unknown[] = [];
      for await (const r of client.fullDuplexCall(items())) got.push(r);
      assert.equal(got.length, 0);
    });

    it("custom_metadata", async () => {
      let header: Headers | undefined;
      let trailer: Headers | undefined;
      await client.unaryCall(
        { responseSize: 314159, payload: { body: zeros(271828) } },
        {
          headers: {
            "x-grpc-test-echo-initial": "test_initial_metadata_value",
            "x-grpc-test-echo-trailing-bin": Buffer.from("ababab", "hex").toString("base64"),
          },
          onHeader: (h: Headers) => (header = h),
          onTrailer: (t: Headers) => (trailer = t),
        },
      );
      assert.equal(header?.get("x-grpc-test-echo-initial"), "test_initial_metadata_value");
      assert.equal(Buffer.from(trailer?.get("x-grpc-test-echo-trailing-bin") ?? "", "base64").toString("hex"), "ababab");
    });

    it("status_code_and_message and special_status_message", async () => {
      for (const message of ["test status message", SPECIAL_MESSAGE]) {
        const err = await expectCode(client.unaryCall({ responseStatus: { code: 2, message } }), Code.Unknown);
        assert.equal(err.rawMessage, message);
      }
      // The streaming half needs a bidi stream, which HTTP/1.1 cannot carry.
      if (way.http !== "2") return;
      const drain = async () => {
        for await (const _ of client.fullDuplexCall(items({ responseStatus: { code: 2, message: "test status message" } }))) {
          // no responses expected
        }
      };
      const err = await expectCode(drain(), Code.Unknown);
      assert.equal(err.rawMessage, "test status message");
    });

    it("unimplemented_method and unimplemented_service", async () => {
      await expectCode(client.unimplementedCall({}), Code.Unimplemented);
      await expectCode(unimplemented.unimplementedCall({}), Code.Unimplemented);
    });

    bidi("cancel_after_first_response", async () => {
      const ac = new AbortController();
      let released: () => void = () => {};
      async function* requests() {
        yield { responseParameters: [{ size: 31415 }], payload: { body: zeros(27182) } };
        await new Promise<void>((r) => (released = r));
      }
      const run = async () => {
        for await (const _ of client.fullDuplexCall(requests(), { signal: ac.signal })) ac.abort();
      };
      await expectCode(run(), Code.Canceled);
      released();
      for (let i = 0; i < 100 && server.inflightCount > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(server.inflightCount, 0);
    });

    bidi("timeout_on_sleeping_server", async () => {
      let released: () => void = () => {};
      async function* requests() {
        yield { payload: { body: zeros(27182) } };
        await new Promise<void>((r) => (released = r));
      }
      const run = async () => {
        for await (const _ of client.fullDuplexCall(requests(), { timeoutMs: 1 })) {
          // no responses expected
        }
      };
      await expectCode(run(), Code.DeadlineExceeded);
      released();
    });
  });
}
