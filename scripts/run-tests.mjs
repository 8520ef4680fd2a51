// Runs every compiled *.test.js under dist/test with node's test runner.
// (Node 20's `--test <dir>` would also run helper modules; globs arrived in Node 21.)
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith(".test.js")) out.push(p);
  }
  return out;
}

const filter = process.argv.slice(2);
// COVERAGE=1 (`npm run coverage`, CI): every test process, and every process a test starts, writes
// V8 coverage; c8 then reports it against src/*.ts through the source maps (.c8rc.json says what
// counts). One run of the suite gives both the verdict and the figure.
const coverage = process.env.COVERAGE === "1";
if (coverage) {
  rmSync("coverage", { recursive: true, force: true });
  process.env.NODE_V8_COVERAGE = resolve("coverage/tmp");
}
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
// Each run ends with its own summary; the last line adds them up for the whole suite.
const total = { pass: 0, fail: 0 };
let status = 0;
for (const [list, timeout] of runs) {
  // Through a pipe node picks TAP; a terminal keeps the spec reporter (in colour) it would get.
  const tty = process.stdout.isTTY ? ["--test-reporter=spec"] : [];
  const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: "1" } : process.env;
  const args = ["--test", ...tty, "--test-concurrency=2", `--test-timeout=${timeout}`, ...list];
  const child = spawn(process.execPath, args, { stdio: ["inherit", "pipe", "inherit"], env });
  let tail = "";
  child.stdout.on("data", (chunk) => {
    process.stdout.write(chunk);
    tail = (tail + chunk.toString("utf8")).slice(-4096);
  });
  const code = await new Promise((resolve) => child.on("close", (c) => resolve(c)));
  const plain = tail.replace(/\x1b\[[0-9;]*m/g, ""); // colour codes off
  for (const k of ["pass", "fail"]) total[k] += Number(new RegExp(`^(?:# |\u2139 )${k} (\\d+)$`, "m").exec(plain)?.[1] ?? 0);
  status ||= code ?? 1;
}
if (runs.length > 1) console.log(`all: ${total.pass} passed, ${total.fail} failed`);
if (coverage) {
  delete process.env.NODE_V8_COVERAGE;
  const c8 = fileURLToPath(import.meta.resolve("c8/bin/c8.js"));
  const report = spawnSync(process.execPath, [c8, "report"], { stdio: "inherit" }).status ?? 1;
  status ||= report;
}
process.exit(status);
