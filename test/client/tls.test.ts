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

describe("TLS options given a file path where PEM text is expected", () => {
  it("createServer and createClient name the option and say to pass the file's contents", async () => {
    const { key, cert } = selfSigned();
    const pem = /tls\.(key|cert|ca) is not PEM text \("[^"]+" looks like a file path\): key, cert and ca take the PEM contents .*fs\.readFileSync\(path\)/;
    assert.throws(
      () => createServer({ services: [new GreetServiceImpl()], tls: { key: "./server.key", cert } }),
      (e: Error) => e instanceof TypeError && /^createServer: tls\.key/.test(e.message) && pem.test(e.message),
    );
    assert.throws(
      () => createServer({ services: [new GreetServiceImpl()], tls: { key, cert: Buffer.from("certs/server.crt") } }),
      /createServer: tls\.cert is not PEM text/,
    );
    assert.throws(
      () => createClient(GreetServiceImpl, { providers: ["https://127.0.0.1:1"], tls: { ca: ["ca.pem"] } }),
      (e: Error) => e instanceof TypeError && /^createClient: tls\.ca/.test(e.message) && pem.test(e.message),
    );
    // PEM text, as strings or Buffers, is taken as before.
    const ok = createServer({ services: [new GreetServiceImpl()], tls: { key: key.toString(), cert } });
    await ok.close();
  });
});
