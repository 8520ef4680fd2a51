// `npm start` and the test tiers build only when dist/ is older than what it is built from: a file
// or folder of src/, samples/, test/ or bench/ (a deleted file changes its folder's time), a
// tsconfig, package.json or the ESM wrapper script. Else the build (`npm run build`) is skipped.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const SOURCES = ["src", "samples", "test", "bench", "package.json", "tsconfig.json", "tsconfig.esm.json", "scripts/esm-wrappers.mjs"];
/** What each step of the build writes: the oldest of them is when the last build began. */
const OUTPUTS = ["dist/src/index.js", "dist/samples/greet/server.js", "dist/test/helpers/http.js", "dist/esm/index.mjs", "dist/mjs/index.js"];

function newest(path) {
  const st = statSync(path);
  let t = st.mtimeMs;
  if (st.isDirectory()) {
    for (const name of readdirSync(path)) {
      if (name === "node_modules") continue;
      t = Math.max(t, newest(join(path, name)));
    }
  }
  return t;
}

const built = OUTPUTS.every((f) => existsSync(f)) ? Math.min(...OUTPUTS.map((f) => statSync(f).mtimeMs)) : 0;
const changed = Math.max(...SOURCES.filter((p) => existsSync(p)).map(newest));
if (built > changed) {
  if (!process.argv.includes("--quiet")) console.log("dist/ is up to date: no build (npm run build forces one)");
} else {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["run", "build", "--silent"], { stdio: "inherit" });
  process.exit(r.status ?? 1);
}
