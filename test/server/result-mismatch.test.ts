import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, closeClient, createClient, createServer, Field, Method, RpcError, Service, type TripleServer } from "../../src/index.js";

/**
 * A response that does not match the method's declared result is the server's bug, not the
 * caller's: the typed client says `internal`, naming the method and what is wrong, with the same
 * text on every protocol (it used to be `invalid_argument` without the method over gRPC).
 */

class Owner {
  @Field() name!: string;
  @Field() since!: Date;
}

@Service("mismatch.Pets")
class Pets {
  @Method({ returns: Owner })
  async owner(): Promise<Owner> {
    return { name: "ann" } as Owner;
  }

  @Method({ returns: Owner })
  async *owners(): AsyncIterable<Owner> {
    yield { name: "ann" } as Owner;
  }
}

const EXPECTED = /^the response does not match the declared result of \/mismatch\.Pets\/owners?: the result\.since is missing$/;

describe("a result that does not match its declared type: the same error on every protocol", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new Pets()], logger: { error() {}, warn() {}, info() {} } });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  for (const protocol of ["triple", "grpc", "connect", "grpc-web"] as const) {
    it(`${protocol}: unary`, async () => {
      const c = createClient(Pets, { providers: server.url, protocol, retries: 0 });
      try {
        await assert.rejects(c.owner(), (e: RpcError) => {
          assert.equal(e.code, Code.Internal, e.message);
          assert.match(e.message, EXPECTED);
          return true;
        });
      } finally {
        closeClient(c);
      }
    });
  }

  for (const protocol of ["grpc", "connect"] as const) {
    it(`${protocol}: a server stream's message`, async () => {
      const c = createClient(Pets, { providers: server.url, protocol, retries: 0 });
      try {
        await assert.rejects(
          (async () => {
            for await (const _ of c.owners()) void _;
          })(),
          (e: RpcError) => {
            assert.equal(e.code, Code.Internal, e.message);
            assert.match(e.message, EXPECTED);
            return true;
          },
        );
      } finally {
        closeClient(c);
      }
    });
  }
});
