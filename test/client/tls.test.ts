import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { closeClient, Code, createClient, createServer, type RpcError, type TripleServer } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { collect } from "./services.js";
import { selfSigned } from "../helpers/tls.js";


describe("https:// providers: TLS for HTTP/1.1, HTTP/2 and gRPC", () => {
  let server: TripleServer;
  let ca: Buffer;
  let port: number;
  const clients: object[] = [];
  before(async () => {
    const { key, cert } = selfSigned();
    ca = cert;
    server = createServer({ services: [new GreetServiceImpl()], tls: { key, cert } });
    port = (await server.listen({ port: 0 })).port;
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await server.close();
  });

  for (const opts of [{ httpVersion: "1.1" as const }, { httpVersion: "2" as const }, { protocol: "grpc" as const }]) {
    it(`calls over TLS (${JSON.stringify(opts)})`, async () => {
      const c = createClient(GreetServiceImpl, { providers: [`https://127.0.0.1:${port}`], tls: { ca }, ...opts });
      clients.push(c);
      assert.deepEqual(await c.greet({ name: "triple" }), { greeting: "triple" });
      assert.equal((await collect(c.greetServerStream({ name: "t" }))).length, 3);
    });
  }

  it("an untrusted certificate fails the call as unavailable", async () => {
    const c = createClient(GreetServiceImpl, { providers: [`https://127.0.0.1:${port}`], cluster: "failfast" });
    clients.push(c);
    const err = (await c.greet({ name: "triple" }).catch((e) => e)) as RpcError;
    assert.equal(err.code, Code.Unavailable);
    assert.match(err.message, /certificate/i);
  });
});
