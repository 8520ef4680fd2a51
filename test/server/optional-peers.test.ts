import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";

// dist/test/server → dist
const DIST = join(__dirname, "..", "..");

/**
 * A fresh process where the optional peer dependencies are not installed (resolving them fails as
 * it does in an app that did not install them): a server with its OpenAPI document and a client
 * boot and call; the docs page and a ZooKeeper registry say which package to install.
 * (test/package checks the same from a real install of the tarball without them.)
 */
const CHILD = `
const Module = require("node:module");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (/^(swagger-ui-dist|node-zookeeper-client)(\\/|$)/.test(request)) {
    throw Object.assign(new Error("Cannot find module '" + request + "'"), { code: "MODULE_NOT_FOUND" });
  }
  return resolve.call(this, request, ...rest);
};
const { createServer } = require(${JSON.stringify(join(DIST, "src/index.js"))});
const { createClient, closeClient } = require(${JSON.stringify(join(DIST, "src/client.js"))});
const { GreetServiceImpl } = require(${JSON.stringify(join(DIST, "samples/greet/greet-service.js"))});
const text = async (r) => [r.status, (await r.text()).slice(0, 300)];
(async () => {
  const out = {};
  const server = createServer({ services: [new GreetServiceImpl()], openapi: true });
  await server.listen({ port: 0, host: "127.0.0.1" });
  const client = createClient(GreetServiceImpl, { providers: server.url.replace("http://", "") });
  out.call = await client.greet({ name: "triple" });
  closeClient(client);
  out.document = (await fetch(server.url + "/openapi.json")).status;
  out.page = await text(await fetch(server.url + "/docs"));
  out.asset = await text(await fetch(server.url + "/docs/swagger-ui-bundle.js"));
  const failure = async (f) => { try { await f(); return "no error"; } catch (e) { return e.message; } };
  out.registryClient = await failure(() => createClient(GreetServiceImpl, { registry: "zookeeper://127.0.0.1:1" }));
  out.registryServer = await failure(() => createServer({ services: [new GreetServiceImpl()], registry: "zookeeper://127.0.0.1:1" }).listen({ port: 0, host: "127.0.0.1" }));
  await server.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe("the optional peer dependencies (swagger-ui-dist, node-zookeeper-client) not installed", () => {
  it("a server and a client work; the docs page and a ZooKeeper registry name the package to install", () => {
    const out = JSON.parse(execFileSync(process.execPath, ["-e", CHILD], { encoding: "utf8", timeout: 30_000 }));
    assert.deepEqual(out.call, { greeting: "triple" });
    assert.equal(out.document, 200);
    const docs = /Install swagger-ui-dist to serve the docs UI: npm i swagger-ui-dist/;
    assert.equal(out.page[0], 501);
    assert.match(out.page[1], docs);
    assert.equal(out.asset[0], 501);
    assert.match(out.asset[1], docs);
    const zk = /ZooKeeper registry: cannot load node-zookeeper-client .*\(npm i node-zookeeper-client\)/;
    assert.match(out.registryClient, zk);
    assert.match(out.registryServer, zk);
  });
});
