import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { copyCheckout, makeApp, runApp } from "./app.js";

/**
 * The package installed from a checkout's directory, as a user does after `npm ci` there (npm
 * links it and runs its `prepare`); a decorated app compiled with tsc runs against it.
 */
const work = mkdtempSync(join(tmpdir(), "triple-install-dir-"));

describe("the package installed from a checkout's directory", { timeout: 600_000 }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  it("installs from the checkout's directory (npm runs its prepare) and an ESM app runs against it", async () => {
    const checkout = join(work, "checkout");
    copyCheckout(checkout, true);
    await runApp(makeApp(work, "esm", checkout, "from-directory"));
    assert.ok(existsSync(join(checkout, "dist", "src", "index.js")));
  });
});
