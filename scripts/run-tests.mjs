// Runs the compiled *.test.js under dist/test with node's test runner, by tier: `--fast` (no
// package install, ZooKeeper, Java, browser or GiB body: the edit loop), `--slow` (the rest), or
// both (the default, `npm test`). Installs the test fixtures' own packages first when missing.
// Fast files share four processes (shards, scripts/test-shard.mjs), two at a time; a file marked
// `// isolate: (why)` and every slow file keep node --test's process of their own.
// (Node 20's `--test <dir>` would also run helper modules; globs arrived in Node 21.)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) find(p, out);
    else if (name.endsWith(".test.js")) out.push(p);
  }
  return out;
}

/**
 * Why a test file is in the slow tier, or undefined when it is fast. Whole folders need what
 * their name says; any other file says so in its first lines: `// tier: slow (why)`.
 */
const SLOW_FOLDERS = {
  package: "package installs",
  compilers: "package installs",
  java: "Java",
  registry: "ZooKeeper",
  browser: "Chromium",
  hostile: "attacks beside a bystander: seconds each, CPU-bound",
  robustness: "GiB bodies, thousands of connections and frames",
};
const slowReason = (file) => reasonOf(file, SLOW_FOLDERS, /^\/\/ tier: slow\b(.*)$/m);

/** The reason `folders` give a test file's folder, else the one its source's first lines give by `tag`. */
function reasonOf(file, folders, tag) {
  const rel = relative(join("dist", "test"), file);
  const folder = folders[rel.split(sep)[0]];
  if (folder) return folder;
  const source = join("test", rel.replace(/\.js$/, ".ts"));
  if (!existsSync(source)) return undefined;
  return tag.exec(readFileSync(source, "utf8").slice(0, 4000))?.[1].trim() || undefined;
}

/**
 * Why a fast test file needs a process of its own, or undefined when it can share one (a shard,
 * scripts/test-shard.mjs). Whole folders say it here; any other file in its first lines:
 * `// isolate: (why)`.
 */
const ISOLATED_FOLDERS = {
  observability: "OpenTelemetry's global providers (set by the SDK tests, absent in the no-SDK ones)",
};
const isolateReason = (file) => reasonOf(file, ISOLATED_FOLDERS, /^\/\/ isolate:(.*)$/m);

/** True when every package of the fixture's lockfile is installed at its locked version. */
function fixtureInstalled(dir) {
  const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8"));
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (path === "" || entry.optional || entry.link) continue;
    const manifest = join(dir, path, "package.json");
    if (!existsSync(manifest) || JSON.parse(readFileSync(manifest, "utf8")).version !== entry.version) return false;
  }
  return true;
}

/**
 * The fixtures under test/fixtures with a package of their own (another TypeScript, dubbo-js's
 * protobuf 1.x): installed with `npm ci` (offline first) when a selected test names the folder
 * and its packages are missing or not the locked ones, so a fresh clone needs no extra step.
 */
function installFixtures(files) {
  const root = join("test", "fixtures");
  for (const name of readdirSync(root)) {
    const dir = join(root, name);
    if (!existsSync(join(dir, "package-lock.json"))) continue;
    const needle = `test/fixtures/${name}`;
    if (!files.some((f) => readFileSync(f, "utf8").includes(needle)) || fixtureInstalled(dir)) continue;
    console.log(`# installing the packages of ${dir} (npm ci --prefer-offline --prefix ${dir}): a test uses them`);
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = spawnSync(npm, ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--prefix", dir], { stdio: ["ignore", "inherit", "inherit"] });
    if (r.status !== 0) console.log(`# npm ci in ${dir} failed (status ${r.status}): the tests that use it will fail`);
  }
}

const args = process.argv.slice(2);
const tier = args.includes("--fast") ? "fast" : args.includes("--slow") ? "slow" : "all";
const filter = args.filter((a) => !a.startsWith("--"));
// COVERAGE=1 (`npm run coverage`, CI): every test process, and every process a test starts, writes
// V8 coverage; c8 then reports it against src/*.ts through the source maps (.c8rc.json says what
// counts). One run of the suite gives both the verdict and the figure.
const coverage = process.env.COVERAGE === "1";
if (coverage) {
  rmSync("coverage", { recursive: true, force: true });
  process.env.NODE_V8_COVERAGE = resolve("coverage/tmp");
}
let files = find(join("dist", "test")).sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
if (tier !== "all") files = files.filter((f) => (slowReason(f) === undefined) === (tier === "fast"));
if (files.length === 0) {
  console.error(`no ${tier === "all" ? "" : `${tier}-tier `}test files found under dist/test`);
  process.exit(1);
}
installFixtures(files);
// The package tests (npm pack, installs from a tarball, a directory and a git URL, each app
// compiled and booted) take minutes on a loaded machine: they run after the rest, with a longer limit.
const slow = (f) => f.includes(join("test", "package"));
// Fast files that can share a process run in SHARDS processes, two at a time (2 cores), before
// the rest; a handful of files (a targeted run) keeps node --test's process per file.
const SHARDS = 4;
const shardable = files.filter((f) => slowReason(f) === undefined && isolateReason(f) === undefined);
const sharded = shardable.length >= 2 * SHARDS ? new Set(shardable) : new Set();
const runs = [
  [files.filter((f) => !slow(f) && !sharded.has(f)), 120_000],
  [files.filter(slow), 600_000],
].filter(([list]) => list.length > 0);
// Through a pipe node picks TAP; a terminal keeps the spec reporter (in colour) it would get.
const tty = process.stdout.isTTY ? ["--test-reporter=spec"] : ["--test-reporter=tap"];
const env = process.stdout.isTTY ? { ...process.env, FORCE_COLOR: "1" } : process.env;
// Each run ends with its own summary; the last line adds them up for the whole suite.
const total = { pass: 0, fail: 0, cancelled: 0 };
const started = Date.now();
let status = 0;

/** Adds the summary at the end of a run's output to the totals. */
function count(tail, code) {
  const plain = tail.replace(/\x1b\[[0-9;]*m/g, ""); // colour codes off
  for (const k of ["pass", "fail", "cancelled"]) total[k] += Number(new RegExp(`^(?:# |\u2139 )${k} (\\d+)$`, "m").exec(plain)?.[1] ?? 0);
  status ||= code ?? 1;
}

/** Runs one shard (its files in one process), printing its output as one block when it ends. */
function runShard(list, n) {
  const child = spawn(process.execPath, [...tty, "--test-timeout=120000", join("scripts", "test-shard.mjs"), ...list], { stdio: ["inherit", "pipe", "inherit"], env });
  const chunks = [];
  const began = Date.now();
  child.stdout.on("data", (chunk) => chunks.push(chunk));
  return new Promise((resolve) =>
    child.on("close", (code) => {
      const out = Buffer.concat(chunks).toString("utf8");
      process.stdout.write(`# shard ${n + 1}/${SHARDS} (${((Date.now() - began) / 1000).toFixed(1)} s): ${list.map((f) => relative(join("dist", "test"), f)).join(" ")}\n${out}`);
      count(out.slice(-4096), code);
      resolve();
    }),
  );
}

if (sharded.size > 0) {
  const lists = Array.from({ length: SHARDS }, () => []);
  [...sharded].forEach((f, i) => lists[i % SHARDS].push(f));
  let next = 0;
  const worker = async () => {
    while (next < lists.length) {
      const n = next++;
      await runShard(lists[n], n);
    }
  };
  await Promise.all([worker(), worker()]);
}
for (const [list, timeout] of runs) {
  const args = ["--test", ...tty, "--test-concurrency=2", `--test-timeout=${timeout}`, ...list];
  const child = spawn(process.execPath, args, { stdio: ["inherit", "pipe", "inherit"], env });
  let tail = "";
  child.stdout.on("data", (chunk) => {
    process.stdout.write(chunk);
    tail = (tail + chunk.toString("utf8")).slice(-4096);
  });
  const code = await new Promise((resolve) => child.on("close", (c) => resolve(c)));
  count(tail, code);
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
const what = tier === "all" ? "all" : `${tier} tier`;
const cancelled = total.cancelled ? `, ${total.cancelled} cancelled (timed out)` : "";
console.log(`${what}: ${files.length} files, ${total.pass} passed, ${total.fail} failed${cancelled} in ${seconds} s`);
if (coverage) {
  delete process.env.NODE_V8_COVERAGE;
  const c8 = fileURLToPath(import.meta.resolve("c8/bin/c8.js"));
  const report = spawnSync(process.execPath, [c8, "report"], { stdio: "inherit" }).status ?? 1;
  status ||= report;
}
process.exit(status);
