import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { build, type Metafile } from "esbuild";
import { ROOT } from "./app.js";

/**
 * A client-only app bundled with esbuild: no registry configured, so none of the ZooKeeper
 * client (node-zookeeper-client, async, underscore: ~400 KB) may be in the bundle. An app that
 * does use a ZooKeeper registry still runs from its bundle, loading node-zookeeper-client from
 * where the bundle runs.
 */
const work = mkdtempSync(join(tmpdir(), "triple-bundle-"));
/**
 * Unminified bytes of the client-only bundle: ~1,017 KB, of which protobufjs and long are 300 KB,
 * @opentelemetry/api 45 KB, reflect-metadata 40 KB, our Java serializations 40 KB (loaded on the
 * first hessian2 / fastjson2 call, bundled all the same), our registry consumer (mapping bounds,
 * pacing, ZooKeeper reply framing) 60 KB, Dubbo governance (routers, configurators, config
 * center: every registry client routes by static tags) ~100 KB; the ZooKeeper client would add
 * ~230 KB, the `yaml` package governance rules are read with ~280 KB (both loaded at run time,
 * never bundled).
 */
const CLIENT_BUDGET = 1040 * 1024;
const ZK_PACKAGES = ["node-zookeeper-client", "async", "underscore", "yaml"];

const PROTO = `syntax = "proto3";
package app;
message HelloRequest { string name = 1; }
message HelloReply { string text = 1; }
service Hello { rpc Say(HelloRequest) returns (HelloReply); }
`;

const CLIENT_APP = `import { closeClient, createClient } from "triple-rpc/client";
const client = createClient({ proto: process.cwd() + "/hello.proto", service: "app.Hello" }, { providers: "127.0.0.1:1" });
client.say({ name: "x" }).then(
  () => console.log("answered?"),
  (e) => { console.log(e.code); return closeClient(client); },
);
`;

/** A server and its typed client in one app, standard decorators, every type declared (esbuild emits no metadata). */
const SERVER_APP = `import { Method, Service, closeClient, createClient, createServer } from "triple-rpc";
@Service("app.Echo")
class Echo {
  @Method({ params: [{ name: "text", type: String }], returns: String })
  async say(text: string): Promise<string> { return "echo " + text; }
}
const server = createServer({ services: [new Echo()], health: false, reflection: false });
await server.listen({ port: 0, host: "127.0.0.1" });
const out: string[] = [];
for (const protocol of ["triple", "grpc"] as const) {
  const client = createClient(Echo, { providers: server.url, protocol, timeoutMs: 5000 });
  out.push(await client.say(protocol));
  closeClient(client);
}
await server.close();
console.log(out.join(","));
`;

const REGISTRY_APP = `import { ZookeeperRegistry } from "triple-rpc/client";
try {
  const registry = new ZookeeperRegistry("zookeeper://127.0.0.1:1");
  registry.close().then(() => console.log("loaded"));
} catch (e) {
  console.log(e.message);
}
`;

/** Bundles `entry` of the app for Node (one CommonJS file); returns the packages in it and its size. */
async function bundle(entry: string): Promise<{ out: string; bytes: number; packages: Set<string> }> {
  const out = join(work, entry.replace(/\.mjs$/, ".cjs"));
  const r = await build({ entryPoints: [join(work, entry)], bundle: true, platform: "node", format: "cjs", outfile: out, metafile: true, logLevel: "silent" });
  return { out, bytes: statSync(out).size, packages: packagesOf(r.metafile) };
}

/** The packages whose files went into a bundle (the innermost node_modules/<name> of each input). */
function packagesOf(meta: Metafile): Set<string> {
  const names = new Set<string>();
  for (const input of Object.keys(meta.inputs)) {
    const all = [...input.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)];
    if (all.length) names.add(all[all.length - 1]![1]!);
  }
  return names;
}

/**
 * Bundles `entry` as one ESM file the way docs/schema.md says (no banner, triple-rpc inside the
 * bundle): the bundler takes the package's real ESM build, so no CommonJS `require` of a Node
 * built-in is left to fail ("Dynamic require of "node:fs" is not supported").
 */
async function bundleEsm(entry: string): Promise<string> {
  const out = join(work, entry.replace(/\.m?ts$|\.mjs$/, ".bundle.mjs"));
  await build({ entryPoints: [join(work, entry)], bundle: true, platform: "node", format: "esm", target: "node20", outfile: out, logLevel: "silent" });
  return out;
}

const run = (file: string) => spawnSync(process.execPath, [file], { cwd: work, encoding: "utf8", timeout: 30_000 });

describe("a bundled app", () => {
  before(() => {
    mkdirSync(join(work, "node_modules"));
    symlinkSync(ROOT, join(work, "node_modules", "triple-rpc"), "dir");
    writeFileSync(join(work, "client.mjs"), CLIENT_APP);
    writeFileSync(join(work, "hello.proto"), PROTO);
    writeFileSync(join(work, "registry.mjs"), REGISTRY_APP);
    writeFileSync(join(work, "server.ts"), SERVER_APP);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it("client-only: no ZooKeeper client in the bundle, within the size budget, and it runs", async () => {
    const { out, bytes, packages } = await bundle("client.mjs");
    for (const p of ZK_PACKAGES) assert.ok(!packages.has(p), `${p} is in the client-only bundle: ${[...packages].join(", ")}`);
    assert.ok(bytes <= CLIENT_BUDGET, `client-only bundle: ${bytes} bytes, budget ${CLIENT_BUDGET}`);
    const r = run(out);
    assert.equal(r.stdout.trim(), "14", r.stderr); // unavailable: nothing listens there
  });

  it("client-only as one ESM bundle (esbuild --format=esm --target=node20, no banner): it loads and runs", async () => {
    const r = run(await bundleEsm("client.mjs"));
    assert.equal(r.stdout.trim(), "14", r.stderr);
  });

  it("a server and its client as one ESM bundle and as one CommonJS bundle: both serve and call", async () => {
    const esm = run(await bundleEsm("server.ts"));
    assert.equal(esm.stdout.trim(), "echo triple,echo grpc", esm.stderr);
    const cjsApp = join(work, "server-cjs.ts");
    const [imports, ...body] = SERVER_APP.split("\n"); // CommonJS has no top-level await
    writeFileSync(cjsApp, `${imports}\n(async () => {\n${body.join("\n")}\n})();\n`);
    const out = join(work, "server.bundle.cjs");
    await build({ entryPoints: [cjsApp], bundle: true, platform: "node", format: "cjs", target: "node20", outfile: out, logLevel: "silent" });
    const cjs = run(out);
    assert.equal(cjs.stdout.trim(), "echo triple,echo grpc", cjs.stderr);
  });

  it("with a ZooKeeper registry: node-zookeeper-client is loaded from beside the bundle, or its absence is explained", async () => {
    const { out } = await bundle("registry.mjs");
    const missing = run(out);
    assert.match(missing.stdout, /cannot load node-zookeeper-client .*install it where the app \(or its bundle\) runs/, missing.stderr);
    for (const p of ZK_PACKAGES) symlinkSync(join(ROOT, "node_modules", p), join(work, "node_modules", p), "dir");
    const found = run(out);
    assert.equal(found.stdout.trim(), "loaded", found.stderr);
    const esm = run(await bundleEsm("registry.mjs"));
    assert.equal(esm.stdout.trim(), "loaded", esm.stderr);
  });
});
