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
const r = spawnSync(
  process.execPath,
  ["--test", "--test-concurrency=2", "--test-timeout=120000", ...files],
  { stdio: "inherit" },
);
process.exit(r.status ?? 1);
