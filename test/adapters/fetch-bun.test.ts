import { createClient as createConnectClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { closeClient, createClient, RpcError } from "../../src/index.js";
import { greetDescriptors } from "../connect/greet-descriptors.js";
import { post1 } from "../helpers/http.js";
import { waitForListening } from "../helpers/child.js";

/** Bun comes with the devDependencies (the `bun` package); its binary is node_modules/.bin/bun. */
const BUN = resolve("node_modules/.bin/bun");

describe("createFetchHandler under Bun.serve", { skip: !existsSync(BUN) && "bun is not installed (npm ci installs it)" }, () => {
  let proc: ChildProcess;
  let url = "";
  before(async () => {
    proc = spawn(BUN, [resolve("dist/test/adapters/bun-server.js")], { stdio: ["ignore", "pipe", "pipe"] });
    url = `http://127.0.0.1:${await waitForListening(proc, "bun server")}`;
  });
  after(() => {
    proc.kill("SIGKILL");
  });

  it("unary Triple HTTP JSON, GET, and the handler's error", async () => {
    const r = await post1(url, "/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { greeting: "triple" });
    const bad = await post1(url, "/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: '{"name":"x"}' });
    assert.equal(bad.status, 500);
    assert.match(bad.text(), /name is not right: x/);
    const get = await fetch(`${url}/greet.GreetService/GreetCached?connect=v1&encoding=json&message=${encodeURIComponent('{"name":"b"}')}`);
    assert.deepEqual(await get.json(), { greeting: "hello, b" });
  });

  it("connect-node: Connect unary and server stream, gRPC-Web; our client", async () => {
    const d = greetDescriptors();
    const c: any = createConnectClient(d.service, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
    assert.equal((await c.greet({ name: "triple" })).greeting, "triple");
    const got: string[] = [];
    for await (const m of c.greetServerStream({ name: "bun" })) got.push(m.greeting);
    assert.deepEqual(got, ["hello, bun (1/3)", "hello, bun (2/3)", "hello, bun (3/3)"]);
    const w: any = createConnectClient(d.service, createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }));
    assert.equal((await w.greet({ name: "triple" })).greeting, "triple");
    const client = createClient(GreetServiceImpl, { providers: [url], httpVersion: "1.1", retries: 0 });
    try {
      assert.deepEqual(await client.greet({ name: "triple" }), { greeting: "triple" });
      const err = (await client.greet({ name: "no" }).catch((e) => e)) as RpcError;
      assert.ok(err instanceof RpcError);
    } finally {
      await closeClient(client);
    }
  });
});
