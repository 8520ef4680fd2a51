import * as assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { after, before, describe, it } from "node:test";
import { copyCheckout, makeApp, ROOT, runApp, TSC, typescript5 } from "./app.js";

/**
 * The published package, as a user gets it: a fresh checkout (no dist/) packed with `npm pack`
 * (its `prepare` builds), installed into fresh ESM and CommonJS apps, a decorated service
 * compiled there with tsc, booted and called. (install.test.ts installs from a directory and a git URL.)
 */
const work = mkdtempSync(join(tmpdir(), "triple-package-"));
const checkout = join(work, "checkout");
let tarball = "";

describe("the npm package from a fresh app", { timeout: 600_000 }, () => {
  before(() => {
    copyCheckout(checkout, true);
    execFileSync("npm", ["pack", "--pack-destination", work], { cwd: checkout, stdio: "pipe" });
    tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz"))!);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it("the tarball of a fresh checkout holds the built library, its licence and docs", () => {
    const list = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter(Boolean);
    assert.ok(list.includes("package/dist/src/index.js"));
    assert.ok(list.includes("package/dist/src/index.d.ts"));
    assert.ok(list.includes("package/dist/esm/index.mjs"));
    assert.ok(list.includes("package/dist/src/cli/main.js"));
    assert.ok(list.includes("package/LICENSE"));
    for (const f of list) assert.ok(!/^package\/(dist\/)?(test|bench|samples|src\/.*\.ts$)/.test(f) || f.endsWith(".d.ts"), `unexpected ${f}`);
    const licence = readFileSync(join(ROOT, "LICENSE"), "utf8");
    assert.match(licence, /Apache License\s+Version 2\.0, January 2004/);
    assert.match(licence, /END OF TERMS AND CONDITIONS/);
    assert.equal(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).license, "Apache-2.0");
  });

  it("every relative link of the shipped README and docs points at a shipped file", () => {
    const list = new Set(execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter(Boolean));
    const docs = [...list].filter((f) => f.endsWith(".md"));
    assert.ok(docs.includes("package/README.md") && docs.includes("package/docs/operations.md"), docs.join(" "));
    const broken: string[] = [];
    for (const doc of docs) {
      const text = readFileSync(join(ROOT, doc.slice("package/".length)), "utf8");
      for (const m of text.matchAll(/\]\(([^)\s#]+)(#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(m[1]!)) continue;
        const target = posix.normalize(posix.join(posix.dirname(doc), m[1]!));
        if (!list.has(target)) broken.push(`${doc} -> ${m[1]}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  for (const kind of ["esm", "cjs"] as const) {
    it(`${kind}: compiles with tsc, boots, and a client that imports only the contract calls it`, async () => {
      await runApp(makeApp(work, kind, tarball));
    });
  }

  it("the optional peers are not installed: a server and a client run; the docs page and a ZooKeeper registry name the package", () => {
    const dir = join(work, "esm"); // installed and compiled by the esm test above
    for (const p of ["swagger-ui-dist", "@scarf/scarf", "node-zookeeper-client", "underscore", "async"]) {
      assert.ok(!existsSync(join(dir, "node_modules", p)), `${p} was installed with the package`);
    }
    writeFileSync(
      join(dir, "optional.mjs"),
      `import { createServer } from "triple-rpc";
import { createClient } from "triple-rpc/client";
import { HelloContract } from "./dist/contract.js";
const failure = async (f) => { try { await f(); return "no error"; } catch (e) { return e.message; } };
const server = createServer({ services: [new HelloContract()], openapi: true });
await server.listen({ port: 0, host: "127.0.0.1" });
const docs = await fetch(server.url + "/docs");
const out = { docs: [docs.status, await docs.text()], document: (await fetch(server.url + "/openapi.json")).status };
out.registry = await failure(() => createClient(HelloContract, { registry: "zookeeper://127.0.0.1:1" }));
await server.close();
console.log(JSON.stringify(out));
`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ["optional.mjs"], { cwd: dir, encoding: "utf8", timeout: 30_000 }));
    assert.equal(out.document, 200);
    assert.equal(out.docs[0], 501);
    assert.match(out.docs[1], /Install swagger-ui-dist to serve the docs UI: npm i swagger-ui-dist/);
    assert.match(out.registry, /cannot load node-zookeeper-client .*\(npm i node-zookeeper-client\)/);
  });

  it('"module": "commonjs" with node10 resolution (TypeScript 5) finds the types of every entry point', () => {
    const dir = join(work, "cjs");
    writeFileSync(
      join(dir, "src", "node10.ts"),
      `import { createServer } from "triple-rpc";
import { createClient, type Client } from "triple-rpc/client";
import { Service, Method } from "triple-rpc/contract";
export const all: [typeof createServer, typeof createClient, typeof Service, typeof Method] = [createServer, createClient, Service, Method];
export type C = Client<object>;
`,
    );
    const options = { module: "commonjs", moduleResolution: "node10", strict: true, noEmit: true, esModuleInterop: true, types: ["node"] };
    writeFileSync(join(dir, "tsconfig.node10.json"), JSON.stringify({ compilerOptions: options, files: ["src/node10.ts"] }));
    const r = spawnSync(typescript5(work), ["-p", "tsconfig.node10.json"], { cwd: dir, encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    // TypeScript 7 removed node10; "module": "commonjs" alone resolves through the exports map there.
    const { moduleResolution: _, ...ts7 } = options;
    writeFileSync(join(dir, "tsconfig.commonjs.json"), JSON.stringify({ compilerOptions: ts7, files: ["src/node10.ts"] }));
    const r7 = spawnSync(TSC, ["-p", "tsconfig.commonjs.json"], { cwd: dir, encoding: "utf8" });
    assert.equal(r7.status, 0, r7.stdout + r7.stderr);
  });
});
