import express from "express";
import * as assert from "node:assert/strict";
import type * as http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { closeClient, createClient, expressTripleMiddleware, type TripleHandler } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { APP_ROUTE, APP_TEXT, mountedContract, mountedOptions } from "./mounted.js";
import { startSample, stopSample } from "./sample-process.js";

async function listen(app: express.Express): Promise<{ server: http.Server; url: string }> {
  return new Promise((resolve) => {
    const server = app.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

async function shut(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
}

describe("expressTripleMiddleware next to an app route", () => {
  let server: http.Server;
  let rpc: TripleHandler;
  let url = "";
  before(async () => {
    const app = express();
    rpc = expressTripleMiddleware(mountedOptions());
    app.use(rpc);
    app.use(express.json());
    app.get(APP_ROUTE, (_req, res) => {
      res.type("text/plain").send(APP_TEXT);
    });
    app.post("/app/echo", (req, res) => {
      res.json({ youSent: req.body });
    });
    ({ server, url } = await listen(app));
  });
  after(async () => {
    await rpc.close();
    await shut(server);
  });
  mountedContract(() => url, false);

  it("the app's own JSON route still gets its parsed body", async () => {
    const r = await post1(url, "/app/echo", { headers: { "content-type": "application/json" }, body: '{"a":1}' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { youSent: { a: 1 } });
  });
});

describe("expressTripleMiddleware under a path, and behind a body parser", () => {
  let server: http.Server;
  let rpc: TripleHandler;
  let url = "";
  before(async () => {
    const app = express();
    rpc = expressTripleMiddleware({ services: [new GreetServiceImpl()], logger: { info() {}, warn() {}, error() {}, debug() {} } as never });
    app.use("/rpc", rpc);
    // A mistake the middleware explains: a parser mounted before it reads the JSON bodies.
    app.use("/late", express.json(), rpc);
    ({ server, url } = await listen(app));
  });
  after(async () => {
    await rpc.close();
    await shut(server);
  });

  it("app.use('/rpc', mw) serves /rpc/<service>/<method>", async () => {
    const r = await post1(url, "/rpc/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { greeting: "triple" });
  });

  it("a body already read by express.json() is refused with 500 and an explanation, not misread", async () => {
    const r = await post1(url, "/late/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' });
    assert.equal(r.status, 500);
    assert.match(r.text(), /already read by middleware that runs before triple-rpc/);
    assert.match(r.text(), /mount triple-rpc's middleware before the body parsers/);
    // Connect unary JSON is application/json too: refused the same way, in Connect's error shape.
    const ok = await post1(url, "/late/greet.GreetService/Greet", {
      headers: { "content-type": "application/json", "connect-protocol-version": "1" },
      body: '{"name":"triple"}',
    });
    assert.equal(ok.status, 500, "a Connect JSON body was read by the parser too");
    assert.equal(ok.json().code, "internal");
  });
});

describe("the Express sample (README)", () => {
  it("runs: greet over Triple HTTP and Connect, and the app route", async () => {
    const { url, proc } = await startSample("express");
    try {
      const client = createClient(GreetServiceImpl, { providers: [url], httpVersion: "1.1", protocol: "connect", retries: 0 });
      assert.deepEqual(await client.greet({ name: "triple" }), { greeting: "triple" });
      closeClient(client);
      const r = await post1(url, "/app/echo", { headers: { "content-type": "application/json" }, body: '{"x":2}' });
      assert.deepEqual(r.json(), { youSent: { x: 2 } });
    } finally {
      await stopSample(proc);
    }
  });
});
