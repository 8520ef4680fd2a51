import * as assert from "node:assert/strict";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { Code as ConnectCode, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { Code, RpcError } from "../../src/index.js";
import { createClient } from "../../src/web.js";
import { greetDescriptors } from "../connect/greet-descriptors.js";

/**
 * The web client against connect-node's server (not ours), over HTTP/1.1 on Node's fetch:
 * Connect (JSON and proto) and gRPC-Web binary, unary and a server stream, an error with its
 * code and message, from the greet sample's class bound to greet.proto. (connect-node has no
 * gRPC-Web text mode: it answers application/grpc-web-text with 415.)
 */
describe("web client against connect-node's server", () => {
  let server: http.Server;
  let url = "";
  before(async () => {
    const { service } = greetDescriptors();
    const handler = connectNodeAdapter({
      routes(router) {
        router.service(service, {
          async greet(req: { name: string }) {
            if (req.name !== "triple") throw new ConnectError(`name is not right: ${req.name}`, ConnectCode.InvalidArgument);
            return { greeting: req.name };
          },
          async *greetServerStream(req: { name: string }) {
            for (let i = 1; i <= 3; i++) yield { greeting: `hello, ${req.name} (${i}/3)` };
          },
        } as any);
      },
    });
    server = http.createServer(handler);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  for (const [name, opts] of [
    ["Connect JSON", { protocol: "connect" }],
    ["Connect proto", { protocol: "connect", contentType: "proto" }],
    ["gRPC-Web binary", { protocol: "grpc-web" }],
  ] as const) {
    it(`${name}: unary, a server stream, an error`, async () => {
      const c = createClient(GreetServiceImpl, { baseUrl: url, ...opts });
      assert.deepEqual(await c.greet({ name: "triple" }), { greeting: "triple" });
      const got: string[] = [];
      for await (const m of c.greetServerStream({ name: "web" })) got.push(m.greeting);
      assert.deepEqual(got, ["hello, web (1/3)", "hello, web (2/3)", "hello, web (3/3)"]);
      const e = await c.greet({ name: "nobody" }).catch((x: unknown) => x);
      assert.ok(e instanceof RpcError);
      assert.equal(e.code, Code.InvalidArgument);
      assert.equal(e.message, "name is not right: nobody");
    });
  }
});
