// Runs every compiled *.test.js under dist/test with node's test runner.
// (Node 20's `--test <dir>` would also run helper modules; globs arrived in Node 21.)
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith(".test.js")) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
let files = find("dist/test").sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error("no test files found under dist/test");
  process.exit(1);
}
// The package tests (npm pack, installs from a tarball, a directory and a git URL, each app
// compiled and booted) take minutes on a loaded machine: they run after the rest, with a longer limit.
const slow = (f) => f.includes(join("test", "package"));
const runs = [
  [files.filter((f) => !slow(f)), 120_000],
  [files.filter(slow), 600_000],
].filter(([list]) => list.length > 0);
let status = 0;
for (const [list, timeout] of runs) {
  const r = spawnSync(process.execPath, ["--test", "--test-concurrency=2", `--test-timeout=${timeout}`, ...list], { stdio: "inherit" });
  status ||= r.status ?? 1;
}
process.exit(status);
