import Fastify, { type FastifyInstance } from "fastify";
import * as assert from "node:assert/strict";
import type { Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { closeClient, createClient, fastifyTriplePlugin } from "../../src/index.js";
import { post1, post2 } from "../helpers/http.js";
import { APP_ROUTE, APP_TEXT, mountedContract, mountedOptions } from "./mounted.js";
import { startSample, stopSample } from "./sample-process.js";

type AnyFastify = FastifyInstance<any, any, any>;

for (const http2 of [false, true]) {
  describe(`fastifyTriplePlugin (Fastify over ${http2 ? "HTTP/2, http2: true" : "HTTP/1.1"}) next to an app route`, () => {
    let app: AnyFastify;
    let url = "";
    const sockets = new Set<Socket>();
    before(async () => {
      app = http2 ? Fastify({ http2: true }) : Fastify();
      await app.register(fastifyTriplePlugin, mountedOptions());
      app.get(APP_ROUTE, async (_req, reply) => {
        reply.type("text/plain");
        return APP_TEXT;
      });
      app.post("/app/echo", async (req) => ({ youSent: req.body }));
      url = (await app.listen({ port: 0, host: "127.0.0.1" })).replace(/\/$/, "");
      app.server.on("connection", (s: Socket) => {
        sockets.add(s);
        s.once("close", () => sockets.delete(s));
      });
    });
    after(async () => {
      // Clients keep idle HTTP/2 sessions, which Fastify's close waits for.
      const closed = app.close();
      for (const s of sockets) s.destroy();
      await closed;
    });
    mountedContract(() => url, http2);

    it("the app's own JSON route keeps Fastify's body parser", async () => {
      const r = await (http2 ? post2 : post1)(url, "/app/echo", { headers: { "content-type": "application/json" }, body: '{"a":1}' });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json(), { youSent: { a: 1 } });
    });
  });
}

describe("fastifyTriplePlugin under a prefix", () => {
  it("register(plugin, { prefix: '/rpc' }) serves /rpc/<service>/<method>", async () => {
    const app = Fastify();
    await app.register(fastifyTriplePlugin, { prefix: "/rpc", services: [new GreetServiceImpl()] } as never);
    const url = (await app.listen({ port: 0, host: "127.0.0.1" })).replace(/\/$/, "");
    try {
      const ok = await post1(url, "/rpc/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' });
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.json(), { greeting: "triple" });
      const r = await post1(url, "/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: "{}" });
      assert.equal(r.status, 404);
    } finally {
      await app.close();
    }
  });
});

describe("the Fastify sample (README)", () => {
  for (const http2 of [false, true]) {
    it(`runs${http2 ? " with HTTP2=1" : ""}: greet and the app route`, async () => {
      const { url, proc } = await startSample("fastify", http2 ? { HTTP2: "1" } : {});
      try {
        const client = createClient(GreetServiceImpl, { providers: [url], httpVersion: http2 ? "2" : "1.1", retries: 0 });
        assert.deepEqual(await client.greet({ name: "triple" }), { greeting: "triple" });
        closeClient(client);
        const r = await (http2 ? post2 : post1)(url, "/app/echo", { headers: { "content-type": "application/json" }, body: '{"x":2}' });
        assert.deepEqual(r.json(), { youSent: { x: 2 } });
      } finally {
        await stopSample(proc);
      }
    });
  }
});
