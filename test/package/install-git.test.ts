import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { copyCheckout, makeApp, runApp } from "./app.js";

/**
 * The package installed from a git URL (npm clones it, installs its devDependencies and runs its
 * `prepare`); a decorated app compiled with tsc runs against it.
 */
const work = mkdtempSync(join(tmpdir(), "triple-install-git-"));

describe("the package installed from a git URL", { timeout: 600_000 }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  it("installs from a git URL (npm clones, installs its devDependencies and runs prepare) and a CommonJS app runs against it", async () => {
    const repo = join(work, "repo.git");
    copyCheckout(repo, false);
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", ...args], { cwd: repo, stdio: "pipe" });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-q", "-m", "snapshot");
    const dir = makeApp(work, "cjs", `git+file://${repo}`, "from-git");
    assert.ok(existsSync(join(dir, "node_modules", "triple-rpc", "dist", "src", "index.js")));
    await runApp(dir);
  });
});
