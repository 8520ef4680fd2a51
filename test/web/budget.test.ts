import * as assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

/**
 * The size of the web client in a browser bundle (docs/web.md): a page with one contract and the
 * JSON-only client (Triple JSON), bundled with esbuild (ESM, code splitting, minified). What the
 * page loads before its first call is the entry chunk and the chunks it imports statically; the
 * protobuf support (protobufjs, the derived schema, the gRPC-Web half) must stay behind dynamic
 * imports, loaded only by a client that chooses proto, Connect or gRPC-Web; so must the Java
 * value-class parsers (loaded for a method whose result type uses them).
 */

const ROOT = path.resolve(__dirname, "../../..");
const ENTRY = path.join(ROOT, "test/web/page/json-only.ts");

/**
 * The page imports the contract entry by its source path; a browser bundler resolving
 * `triple-rpc/contract` takes package.json's `browser` condition (contract-browser: no
 * reflect-metadata polyfill). The plugin makes the source path resolve the same way.
 */
const browserContract: esbuild.Plugin = {
  name: "browser-contract",
  setup(b) {
    b.onResolve({ filter: /\/src\/contract\.js$/ }, () => ({ path: path.join(ROOT, "src/contract-browser.ts") }));
  },
};
/** The budget of the JSON-only client's static closure, gzipped (level 9). Measured 14.9 KB; see docs/web.md for what it holds. */
const BUDGET_GZ = 15 * 1024;

async function bundle() {
  const r = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    write: false,
    format: "esm",
    splitting: true,
    outdir: "/tmp/triple-web-budget",
    minify: true,
    platform: "browser",
    target: "es2022",
    metafile: true,
    logLevel: "silent",
    plugins: [browserContract],
  });
  const outs = r.metafile.outputs;
  const main = Object.keys(outs).find((k) => outs[k].entryPoint !== undefined);
  assert.ok(main, "the entry chunk");
  const closure = new Set<string>();
  const stack = [main];
  while (stack.length > 0) {
    const k = stack.pop() as string;
    if (closure.has(k)) continue;
    closure.add(k);
    for (const i of outs[k].imports) if (i.kind === "import-statement") stack.push(i.path);
  }
  const files = r.outputFiles.filter((f) => [...closure].some((k) => f.path.endsWith(path.basename(k))));
  const inputs = new Set([...closure].flatMap((k) => Object.keys(outs[k].inputs)));
  const lazy = new Set(
    Object.keys(outs)
      .filter((k) => !closure.has(k))
      .flatMap((k) => Object.keys(outs[k].inputs)),
  );
  return { files, inputs, lazy, code: files.map((f) => f.text).join("") };
}

describe("web client bundle size", () => {
  it(`the JSON-only client for one contract: static closure at most ${BUDGET_GZ / 1024} KB gzipped; protobuf loaded only when chosen`, async () => {
    const { files, inputs, lazy, code } = await bundle();
    const raw = Buffer.concat(files.map((f) => Buffer.from(f.contents)));
    const gz = gzipSync(raw, { level: 9 }).length;
    console.log(`# web JSON-only client: ${files.length} chunks, ${raw.length} bytes minified, ${gz} bytes gzipped`);
    assert.ok(gz <= BUDGET_GZ, `${gz} bytes gzipped, over the budget of ${BUDGET_GZ}`);
    const eager = [...inputs];
    assert.deepEqual(
      eager.filter((i) => /protobufjs|message-codec|method-codec|derived-codec|grpc-web\.ts|node:/.test(i)),
      [],
      "no protobuf support and no node: module in the JSON-only client's static closure",
    );
    assert.ok(
      [...lazy].some((i) => i.includes("node_modules/protobufjs")),
      "protobufjs is in a lazily loaded chunk",
    );
    assert.ok(
      [...lazy].some((i) => i.endsWith("src/web/grpc-web.ts")),
      "the gRPC-Web half is in a lazily loaded chunk",
    );
    assert.deepEqual(
      eager.filter((i) => /reflect-metadata|service\/rest\.ts/.test(i)),
      [],
      "no reflect-metadata polyfill, no REST mapping code",
    );
    assert.deepEqual(
      eager.filter((i) => /codec\/(java-values|converter-extras|binder)\.ts|web\/connect\.ts|protocol-connect\/|service\/download\.ts/.test(i)),
      [],
      "no Java value parsers, no request binder, no Connect code, no Download class before the first call",
    );
    assert.deepEqual(
      eager.filter((i) => /service\/(file-upload|java-class|node-builtin)\.ts|protocol\/bad-request\.ts/.test(i)),
      [],
      "the entries' StreamedFile, JavaClass and badRequestViolations load only where a page uses them",
    );
    // esbuild's require shim (a free `require`) and its ESM interop (an `import *` of a CommonJS
    // package): runtime code every page would load, for code only lazy chunks run.
    assert.doesNotMatch(code, /Dynamic require of/, "no require shim in the page's code");
    assert.doesNotMatch(code, /__esModule/, "no ESM-interop helper in the page's code");
    for (const lazyOne of ["src/codec/converter-extras.ts", "src/web/connect.ts"]) {
      assert.ok(
        [...lazy].some((i) => i.endsWith(lazyOne)),
        `${lazyOne} is in a lazily loaded chunk`,
      );
    }
  });

  it("package.json gives browsers the contract entry without the reflect-metadata polyfill", () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8"));
    const conditions = Object.keys(pkg.exports["./contract"]);
    assert.equal(conditions[0], "browser", "the browser condition comes first (bundlers take the first that matches)");
    assert.equal(pkg.exports["./contract"].browser, "./dist/mjs/contract-browser.js");
    const browserEntry = readFileSync(path.join(ROOT, "src/contract-browser.ts"), "utf8");
    assert.doesNotMatch(browserEntry, /reflect-metadata"/);
  });
});
