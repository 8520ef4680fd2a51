import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type CallContext, closeClient, createClient, createServer, Ctx, Param, ServerStream, Service, type TripleServer } from "../../src/index.js";
import { collect } from "./services.js";

@Service("test.StreamTrailers")
class StreamTrailers {
  @ServerStream()
  async *items(@Param() n: number, @Ctx() ctx: CallContext): AsyncGenerator<number> {
    ctx.responseTrailers.set("x-one", "st");
    ctx.responseTrailers.set("x-two", ["a", "b"]);
    yield n;
  }
}

/** A stream's trailers reach `onTrailers` in one shape whatever the protocol: a string per name, several values joined with ", ". */
describe("stream trailers have the same shape on every protocol", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new StreamTrailers()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  for (const protocol of ["grpc", "grpc-web", "connect"] as const) {
    it(protocol, async () => {
      const client = createClient(StreamTrailers, { providers: [server.url], protocol });
      try {
        let trailers: Record<string, unknown> = {};
        assert.deepEqual(await collect(client.items(7, { onTrailers: (t) => (trailers = t) })), [7]);
        assert.equal(trailers["x-one"], "st");
        // A repeated trailer's values are joined with ", " on every protocol, as node's HTTP/2 joins
        // gRPC's (gRPC-Web's trailer block and Connect's end-stream message list them apart).
        assert.deepEqual(trailers["x-two"], "a, b");
      } finally {
        closeClient(client);
      }
    });
  }
});
