import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";

// dist/test/server → dist
const DIST = join(__dirname, "..", "..");

/**
 * Runs in a fresh process (the test runner's own process may have loaded anything): boots a server,
 * makes calls of each body kind and reports which optional parsers are in `require.cache` after
 * each. They cost ~1.1 MiB of live heap, which under load drives GC cadence and RSS.
 */
const CHILD = `
const { createServer } = require(${JSON.stringify(join(DIST, "src/index.js"))});
const { BinderServiceImpl } = require(${JSON.stringify(join(DIST, "test/binder/services.js"))});
const { TestServiceImpl } = require(${JSON.stringify(join(DIST, "samples/interop/test-service.js"))});
const loaded = () => ["iconv-lite", "fast-xml-parser", "@fastify/busboy", "protobufjs/ext"].filter((m) =>
  Object.keys(require.cache).some((k) => k.includes("/node_modules/" + m + "/")));
(async () => {
  const server = createServer({ services: [new BinderServiceImpl(), new TestServiceImpl()] });
  await server.listen({ port: 0, host: "127.0.0.1" });
  const call = async (type, body) => {
    const r = await fetch(server.url + "/test.BinderService/echo", { method: "POST", headers: { "content-type": type }, body });
    return [r.status, await r.text()];
  };
  const out = { boot: loaded() };
  out.json = [await call("application/json", JSON.stringify(["a"])), loaded()];
  out.utf8 = [await call("text/plain; charset=utf-8", "ü"), loaded()];
  out.latin1 = [await call("text/plain; charset=iso-8859-1", Buffer.from([0xfc])), loaded()];
  out.xml = [await call("application/xml", "<text>x</text>"), loaded()];
  const fd = new FormData();
  fd.append("text", "y");
  const r = await fetch(server.url + "/test.BinderService/echo", { method: "POST", body: fd });
  out.multipart = [[r.status, await r.text()], loaded()];
  // A nested message is more than the compiled ProtoJSON path takes: protobufjs's protojson loads.
  const u = await fetch(server.url + "/grpc.testing.TestService/UnaryCall", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ responseSize: 2, payload: { body: "AAA=" } }) });
  out.protojson = [[u.status, JSON.parse(await u.text()).payload], loaded()];
  await server.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe("optional parsers load on first use", () => {
  it("iconv-lite, fast-xml-parser, busboy and protojson stay unloaded until a request needs them", () => {
    const out = JSON.parse(execFileSync(process.execPath, ["-e", CHILD], { encoding: "utf8", timeout: 30_000 }));
    assert.deepEqual(out.boot, []);
    assert.deepEqual(out.json, [[200, '{"text":"a"}'], []]);
    assert.deepEqual(out.utf8, [[200, '{"text":"ü"}'], []]);
    assert.deepEqual(out.latin1, [[200, '{"text":"ü"}'], ["iconv-lite"]]);
    assert.deepEqual(out.xml, [
      [200, '<?xml version="1.0" encoding="UTF-8"?><response><text>x</text></response>'],
      ["iconv-lite", "fast-xml-parser"],
    ]);
    assert.deepEqual(out.multipart, [
      [200, '{"text":"y"}'],
      ["iconv-lite", "fast-xml-parser", "@fastify/busboy"],
    ]);
    assert.deepEqual(out.protojson, [
      [200, { body: "AAA=" }],
      ["iconv-lite", "fast-xml-parser", "@fastify/busboy", "protobufjs/ext"],
    ]);
  });
});
