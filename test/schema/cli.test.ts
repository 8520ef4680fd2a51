import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";

/**
 * `triple-rpc proto` on modules with side effects: it used to import a server's main module,
 * start its server, say "exports no @Service class" and never exit.
 */

const CLI = resolve("dist/src/cli/main.js");

function cli(module: string, ...options: string[]) {
  return spawnSync(process.execPath, [CLI, "proto", resolve(module), ...options], { encoding: "utf8", timeout: 30_000 });
}

describe("triple-rpc proto on modules with side effects", () => {
  it("a server's main module (defines services via imports, exports none, starts a server): the .proto of what it defined, then exit 0", () => {
    const r = cli("dist/test/schema/cli-server-module.js");
    assert.equal(r.signal, null, "the command exits on its own");
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^syntax = "proto3";\n\npackage inventory;/);
    assert.match(r.stdout, /service InventoryService \{/);
    assert.match(r.stderr, /exports no @Service class; using the 1 it defined: InventoryService/);
    // No time bound of its own: `signal` null above proves it exited before spawnSync's 30 s timeout.
  });

  it("the module sees TRIPLE_RPC_CLI=1, so it can skip starting its server", () => {
    const r = cli("dist/test/schema/cli-server-module.js");
    assert.match(r.stderr, /started \(TRIPLE_RPC_CLI=1\)|^(?!.*started)/s);
    assert.match(r.stderr, /imported \(TRIPLE_RPC_CLI=1\)/);
  });

  it("a module with a timer and no service: exit 1 naming what it looked for", () => {
    const r = cli("dist/test/schema/cli-empty-module.js");
    assert.equal(r.signal, null, "the command exits on its own");
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /cli-empty-module\.js exports no @Service class and defines none: point the command at the compiled module that defines your service classes/,
    );
  });

  it("an ES module whose top-level await never settles: exit 1 after the import limit (--import-timeout-ms), naming the module", () => {
    const dir = mkdtempSync(join(tmpdir(), "triple-cli-"));
    try {
      const file = join(dir, "hangs.mjs");
      writeFileSync(file, "setInterval(() => {}, 1000);\nawait new Promise(() => {});\n");
      const r = cli(file, "--import-timeout-ms", "300");
      assert.equal(r.signal, null, "the command exits on its own");
      assert.equal(r.status, 1);
      assert.match(r.stderr, /hangs\.mjs did not finish loading within 0\.3 s \(a top-level await that never settles\? --import-timeout-ms sets the limit\)/);
      const bad = cli(file, "--import-timeout-ms", "soon");
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /--import-timeout-ms takes a whole number of milliseconds above 0, got "soon"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("triple-rpc proto on services bound to a .proto of their own", () => {
  const GREET = readFileSync(resolve("samples/greet/greet.proto"), "utf8");

  it("only bound services: prints the service's own .proto as it is, and says so", () => {
    const r = cli("dist/test/schema/cli-bound-module.js");
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, GREET);
    assert.match(r.stderr, /greet\.GreetService \(.*samples\/greet\/greet\.proto\) is bound to its own \.proto: printed as it is, not derived/);
  });

  it("only bound services, --out-dir: writes the service's own .proto there (not exit 0 writing nothing)", () => {
    const dir = mkdtempSync(join(tmpdir(), "triple-cli-"));
    try {
      const r = cli("dist/test/schema/cli-bound-module.js", "--out-dir", dir);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(readdirSync(dir), ["greet.proto"]);
      assert.equal(readFileSync(join(dir, "greet.proto"), "utf8"), GREET);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("both kinds: stdout cannot hold two files (exit 1 naming them); --out-dir writes the derived file and the bound one", () => {
    const r = cli("dist/test/schema/cli-mixed-module.js");
    assert.equal(r.status, 1);
    assert.match(r.stderr, /the services need 2 files \(inventory\/inventory_service\.proto, greet\.proto\): use --out-dir/);
    const dir = mkdtempSync(join(tmpdir(), "triple-cli-"));
    try {
      const w = cli("dist/test/schema/cli-mixed-module.js", "--out-dir", dir);
      assert.equal(w.status, 0, w.stderr);
      assert.equal(readFileSync(join(dir, "greet.proto"), "utf8"), GREET);
      assert.match(readFileSync(join(dir, "inventory", "inventory_service.proto"), "utf8"), /service InventoryService \{/);
      assert.match(w.stderr, /greet\.GreetService .* is bound to its own \.proto: copied as it is/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
