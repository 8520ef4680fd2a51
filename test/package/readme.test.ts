import * as assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ROOT, TSCONFIG } from "./app.js";

/** The README's first steps are the ones the package tests take. */
const readme = readFileSync(join(ROOT, "README.md"), "utf8");

/** The text of a `## title` section. */
function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README has no "## ${title}" section`);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

describe("the README", () => {
  it("starts with the two commands", () => {
    const first = /```sh\n([^`]*)```/.exec(readme)![1]!.split("\n").filter(Boolean);
    assert.match(first[0]!, /^npm ci && npm start\b/);
    assert.match(first[1]!, /^npm test\b/);
  });

  it('"Your own app": the tsconfig is the one the package tests compile apps with, for ESM and CommonJS', () => {
    const text = section("Your own app");
    const json = /```json\n([^`]*)```/.exec(text);
    assert.ok(json, "a tsconfig.json block");
    assert.deepEqual(JSON.parse(json[1]!), JSON.parse(TSCONFIG("nodenext")));
    for (const step of ["npm install triple-rpc reflect-metadata", "npx tsc", "node dist/server.js", "node dist/client.js", "type=module", "type=commonjs"]) {
      assert.ok(text.includes(step), `"Your own app" says ${step}`);
    }
  });

  it('"Running the tests": every prerequisite, and the one command that installs them (which CI runs too)', () => {
    const text = section("Running the tests");
    for (const need of ["Java", "ZooKeeper", "kazoo", "grpcio", "Chromium", "h2load", "protoc"]) assert.ok(text.includes(need), `mentions ${need}`);
    assert.ok(text.includes("scripts/install-test-deps.sh"));
    const script = readFileSync(join(ROOT, "scripts", "install-test-deps.sh"), "utf8");
    for (const pkg of ["zookeeper", "python3-kazoo", "python3-grpcio", "chromium", "nghttp2-client", "protobuf-compiler"])
      assert.ok(script.includes(pkg), `installs ${pkg}`);
    assert.match(readFileSync(join(ROOT, ".ci", "run"), "utf8"), /^bash scripts\/install-test-deps\.sh$/m);
    assert.ok(existsSync(join(ROOT, "scripts", "install-test-deps.sh")));
  });

  it('"Running the tests": the install command is run as root (no sudo in containers or CI as root)', () => {
    const block = /```sh\n([^`]*)```/.exec(section("Running the tests"))![1]!;
    assert.match(block, /^bash scripts\/install-test-deps\.sh\s+# as root$/m);
    assert.doesNotMatch(block, /^sudo /m);
  });

  it('"Client": unknown is retried (Dubbo\'s rule), said plainly, with how to turn it off per method and per client', () => {
    const text = section("Client");
    assert.doesNotMatch(text, /safe to send twice \(`unavailable`, `unknown`/);
    for (const says of ["`unknown`", "may run again", "@Method({ retries: 0 })", "methods: { charge: { retries: 0 } }", "`retries: 0`", "failfast"]) {
      assert.ok(text.includes(says), `"Client" says ${says}`);
    }
  });

  it('"Your own app": why the target is es2022, and the CommonJS note as TypeScript 7 has it (no node10: TS5108)', () => {
    const text = section("Your own app");
    assert.match(text, /Node 20 cannot parse decorators/);
    assert.match(text, /TS5108/);
    assert.match(text, /--format=esm --target=node20/);
  });

  it("docs/schema.md: every esbuild command lowers decorators for Node 20 (--target=node20)", () => {
    const schema = readFileSync(join(ROOT, "docs", "schema.md"), "utf8");
    const commands = schema.split("\n").filter((l) => /^esbuild /.test(l));
    assert.ok(commands.length > 0);
    for (const c of commands) assert.match(c, /--target=node20/, c);
  });

  it("docs/registry.md: Java consumers of a server bound to 127.0.0.1 (Dubbo rewrites 127.* to the LAN address), and the two ways out", () => {
    const registry = readFileSync(join(ROOT, "docs", "registry.md"), "utf8");
    const start = registry.indexOf("\n## What Java and Go consumers see\n");
    const seen = registry.slice(start, registry.indexOf("\n## ", start + 1));
    for (const says of [
      "127.0.0.1",
      "NetUtils.filterLocalHost",
      "AbstractClient.getConnectAddress",
      "-Ddubbo.network.interface.ignored=.*",
      'host: "0.0.0.0"',
      "registry.host",
    ]) {
      assert.ok(seen.includes(says), `"What Java and Go consumers see" says ${says}`);
    }
  });
});
