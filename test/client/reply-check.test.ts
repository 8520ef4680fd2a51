import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  type CallContext,
  closeClient,
  Code,
  createClient,
  createServer,
  Ctx,
  Method,
  Param,
  type RpcError,
  Service,
  type TripleServer,
} from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { post1 } from "../helpers/http.js";
import { startHttp1 } from "./raw-servers.js";

/** An h2c server that answers every request as a gRPC-only server does: 200, application/grpc, grpc-status in the headers. */
async function grpcOnlyServer(status: string, message: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.resume();
    stream.on("end", () =>
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": status, "grpc-message": message }, { endStream: true }),
    );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

@Service("trail.Service")
class Trailing {
  @Method()
  hello(@Param("name") name: string, @Ctx() ctx: CallContext): string {
    ctx.responseTrailers.set("x-checksum", "abc");
    ctx.responseTrailers.set("x-digest-bin", Uint8Array.from([1, 2, 255]));
    return `hi ${name}`;
  }
}

describe("a failed call never resolves", () => {
  for (const contentType of ["json", "proto"] as const) {
    it(`${contentType}: 200 + application/grpc + grpc-status 2 with an empty body is the error grpc-status says`, async () => {
      const peer = await grpcOnlyServer("2", "boom%20from%20python");
      const client = createClient(GreetServiceImpl, { providers: peer.url, protocol: "triple", contentType, cluster: "failfast" });
      try {
        await assert.rejects(client.greet({ name: "x" }), (e: RpcError) => {
          assert.equal(e.code, Code.Unknown);
          // The peer's words, then the fix (a gRPC-only server answered).
          assert.equal(e.rawMessage, "boom from python");
          assert.match(e.message, /^boom from python \(the provider answers gRPC only/);
          return true;
        });
      } finally {
        closeClient(client);
        await peer.close();
      }
    });
  }

  it("200 + grpc-status 0 to a Triple request says the provider speaks gRPC only", async () => {
    const peer = await grpcOnlyServer("0", "");
    const client = createClient(GreetServiceImpl, { providers: peer.url, cluster: "failfast" });
    try {
      await assert.rejects(client.greet({ name: "x" }), /Content-Type "application\/grpc".*speaks? gRPC only|answers gRPC only/);
    } finally {
      closeClient(client);
      await peer.close();
    }
  });

  it("a 200 in a content type the request cannot be answered with names what arrived (not 'invalid JSON')", async () => {
    const peer = await startHttp1({ "/greet.GreetService/Greet": { status: 200, headers: { "content-type": "text/html" }, body: "<html>proxy</html>" } });
    const client = createClient(GreetServiceImpl, { providers: peer.url, httpVersion: "1.1", cluster: "failfast" });
    try {
      await assert.rejects(client.greet({ name: "x" }), (e: RpcError) => {
        assert.equal(e.code, Code.Internal);
        assert.match(e.message, /the response has Content-Type "text\/html" where application\/json or text\/json was expected/);
        return true;
      });
    } finally {
      closeClient(client);
      await peer.close();
    }
  });
});

describe("unary trailers travel as trailer- headers", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new Trailing()] });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("the server sends them prefixed, -bin ones base64", async () => {
    const r = await post1(server.url, "/trail.Service/hello", { headers: { "content-type": "application/json" }, body: '["ann"]' });
    assert.equal(r.headers["trailer-x-checksum"], "abc");
    assert.equal(r.headers["trailer-x-digest-bin"], Buffer.from([1, 2, 255]).toString("base64"));
    assert.equal(r.headers["x-checksum"], undefined, "not as plain headers");
  });

  for (const httpVersion of ["1.1", "2"] as const) {
    it(`our client hands them to onTrailers over HTTP/${httpVersion}, -bin ones as bytes`, async () => {
      const client = createClient(Trailing, { providers: server.url, httpVersion });
      try {
        let trailers: Record<string, unknown> = {};
        let headers: Record<string, unknown> = {};
        const answer = await client.hello("ann", {
          onTrailers: (t) => {
            trailers = t;
          },
          onHeaders: (h) => {
            headers = h;
          },
        });
        assert.equal(answer, "hi ann");
        assert.equal(trailers["x-checksum"], "abc");
        assert.deepEqual([...(trailers["x-digest-bin"] as Uint8Array)], [1, 2, 255]);
        assert.equal(headers["trailer-x-checksum"], undefined, "trailers are not headers");
      } finally {
        closeClient(client);
      }
    });
  }
});

describe("client errors say what to change", () => {
  it("options without providers", () => {
    assert.throws(() => createClient(GreetServiceImpl, {} as never), /createClient: options\.providers is missing: give a list of URLs or host:port/);
  });

  it("a provider without a port is refused, naming the default", () => {
    assert.throws(
      () => createClient(GreetServiceImpl, { providers: "localhost" }),
      /provider "localhost" has no port: write host:port \(e\.g\. localhost:50051/,
    );
    assert.doesNotThrow(() => closeClient(createClient(GreetServiceImpl, { providers: "http://localhost" })), "a URL's default port is explicit");
  });

  it("a stream to an HTTP/1.1-only server says streaming needs HTTP/2", async () => {
    const peer = await startHttp1({});
    const client = createClient(GreetServiceImpl, { providers: peer.url, cluster: "failfast" });
    try {
      await assert.rejects(
        (async () => {
          for await (const _ of client.greetServerStream({ name: "x" })) void _;
        })(),
        /did not answer in HTTP\/2 \(it may speak HTTP\/1\.1 only\): gRPC calls and client and bidi streams need HTTP\/2; an HTTP\/1\.1-only server takes unary calls and server streams with httpVersion: "1\.1"/,
      );
    } finally {
      closeClient(client);
      await peer.close();
    }
  });
});
