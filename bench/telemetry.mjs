#!/usr/bin/env node
// What observability costs the server: unary Triple JSON throughput of the greet service with
// no OpenTelemetry SDK registered, and with the real SDK exporting to a no-op exporter (every
// call sampled: a server span, a duration point, size points, the active-calls counter), against
// bare node:http / node:http2 servers answering the same bytes, all in the same run. Servers on
// CPU 0, the load generator on CPU 1 (taskset); HTTP/1.1 load: autocannon; HTTP/2: h2load.
//
//   npm run build && node bench/telemetry.mjs       # DURATION=5 WARMUP=1 ROUNDS=3
//   BASE_DIST=/tmp/base/dist node bench/telemetry.mjs
//   PARTS=1 KINDS=h1 node bench/telemetry.mjs       # + the SDK's parts (see PARTS below); HTTP/1.1 only
//
// BASE_DIST adds a build without telemetry (e.g. the commit before it, built elsewhere) as one
// more server, for a like-for-like "no SDK vs before" figure. Targets: no SDK within 2 % of the
// build before (or, without one, the same ratio to bare node as bench/unary.mjs's 0.85 / 0.9);
// SDK + no-op exporter within 15 % of no SDK.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, pinned, startServer as startPinned, stop } from "./harness.mjs";

const startServer = (args, marker = "ready") => startPinned(args, {}, marker);

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const DIST = process.env.DIST ?? "dist";
const BASE_DIST = process.env.BASE_DIST;
const DURATION = Number(process.env.DURATION ?? 5);
const WARMUP = Number(process.env.WARMUP ?? 1);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const H2_CONNECTIONS = Number(process.env.H2_CONNECTIONS ?? 4);
const H2_STREAMS = Number(process.env.H2_STREAMS ?? 16);
const KINDS = (process.env.KINDS ?? "h1,h2").split(",");
// PARTS=1: also tracing alone, metrics alone, without the size histograms, 10 % sampling, and the
// SDK registered with our telemetry turned off, and the SDK without a context manager (what
// AsyncLocalStorage costs).
const PARTS = process.env.PARTS === "1";
const PATH = "/greet.GreetService/Greet";
const REQUEST = '{"name":"triple"}';
const EXPECTED = '{"greeting":"triple"}';

const have = (cmd) => spawnOk("sh", ["-c", `command -v ${cmd}`]);
function spawnOk(cmd, args) {
  try {
    execFileSync(cmd, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

function run(cmd, args) {
  const [c, a] = pinned("1", cmd, args);
  return execFileSync(c, a, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

function autocannon(port, seconds) {
  const bin = path.join(root, "node_modules", ".bin", "autocannon");
  const out = run(bin, [
    "-c",
    String(CONNECTIONS),
    "-d",
    String(seconds),
    "-m",
    "POST",
    "-H",
    "content-type=application/json",
    "-b",
    REQUEST,
    "--json",
    `http://127.0.0.1:${port}${PATH}`,
  ]);
  const r = JSON.parse(out);
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`autocannon: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

function h2load(port, seconds) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "triple-bench-"));
  const data = path.join(dir, "req.json");
  fs.writeFileSync(data, REQUEST);
  try {
    const out = run("h2load", [
      "-c",
      String(H2_CONNECTIONS),
      "-m",
      String(H2_STREAMS),
      "-D",
      String(seconds),
      "-d",
      data,
      "-H",
      "content-type: application/json",
      `http://127.0.0.1:${port}${PATH}`,
    ]);
    const m = /finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out);
    const st = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
    if (!m || !st) throw new Error(`cannot read h2load output:\n${out}`);
    if (Number(st[2]) > 0 || Number(st[3]) > 0) throw new Error(`h2load: ${st[2]} failed, ${st[3]} errored`);
    return Number(m[1]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function check(port) {
  const r = await fetch(`http://127.0.0.1:${port}${PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: REQUEST,
  });
  const text = await r.text();
  if (r.status !== 200 || text !== EXPECTED) throw new Error(`unexpected answer ${r.status} ${text}`);
}

/** CPU seconds (user + system) a process used so far. */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** One load run; with the server's CPU per request, which interference moves less than req/s. */
function measure(c, seconds) {
  const cpu0 = c.child ? cpuSeconds(c.child.pid) : 0;
  const rps = (c.kind === "h1" ? autocannon : h2load)(c.port, seconds);
  const cpuUs = c.child ? ((cpuSeconds(c.child.pid) - cpu0) * 1e6) / Math.max(1, rps * seconds) : Number.NaN;
  return { rps, cpuUs };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const server = (mode, dist) => (port) => startServer([path.join(here, "telemetry-server.mjs"), mode, String(port), dist]);
const bare = (kind) => (port) => startServer([path.join(here, "bare-server.mjs"), kind, String(port)]);

if (!fs.existsSync(path.join(root, DIST, "src", "index.js"))) {
  console.error(`${DIST}/src/index.js is missing: run npm run build first`);
  process.exit(1);
}

const kinds = KINDS.filter((k) => k === "h1" || have("h2load"));
const configs = [];
for (const kind of kinds) {
  configs.push({ kind, label: `bare node:${kind === "h1" ? "http" : "http2"}`, start: bare(kind) });
  if (BASE_DIST) configs.push({ kind, label: `${kind} before telemetry`, start: server("none", path.relative(root, BASE_DIST)) });
  configs.push({ kind, label: `${kind} no SDK`, start: server("none", DIST) });
  configs.push({ kind, label: `${kind} SDK, no-op exporter`, start: server("sdk", DIST) });
  if (PARTS) {
    configs.push({ kind, label: `${kind} SDK traces only`, start: server("sdk+traces", DIST) });
    configs.push({ kind, label: `${kind} SDK metrics only`, start: server("sdk+metrics", DIST) });
    configs.push({ kind, label: `${kind} SDK, no size metrics`, start: server("sdk+nosizes", DIST) });
    configs.push({ kind, label: `${kind} SDK, 10 % sampled`, start: server("sdk+sample10", DIST) });
    configs.push({ kind, label: `${kind} SDK, telemetry off`, start: server("sdk+off", DIST) });
    configs.push({ kind, label: `${kind} SDK, no context manager`, start: server("sdk+noctx", DIST) });
  }
}

console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ${DURATION} s runs, ${ROUNDS} rounds`);
console.log(`HTTP/1.1: autocannon, ${CONNECTIONS} connections; HTTP/2: h2load, ${H2_CONNECTIONS} x ${H2_STREAMS} streams\n`);

// Every server starts once and is warmed up; then the configurations take turns for ROUNDS rounds,
// each reporting its best round (interference on a shared machine only ever lowers throughput).
const children = [];
try {
  for (const c of configs) {
    c.port = await freePort();
    c.child = await c.start(c.port);
    children.push(c.child);
    if (!c.label.startsWith("bare")) await check(c.port);
    (c.kind === "h1" ? autocannon : h2load)(c.port, WARMUP);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of configs) {
      const { rps, cpuUs } = measure(c, DURATION);
      c.best = Math.max(c.best ?? 0, rps);
      (c.cpu ??= []).push(cpuUs);
      console.log(`round ${round}: ${c.label.padEnd(30)} ${rps.toFixed(0).padStart(9)} req/s  ${cpuUs.toFixed(1).padStart(6)} µs CPU/req`);
    }
  }
} finally {
  await Promise.all(children.map(stop));
}

console.log(`\nbest req/s of ${ROUNDS} rounds; median server CPU per request:`);
for (const c of configs) console.log(`${c.label.padEnd(30)} ${c.best.toFixed(0).padStart(9)} req/s  ${median(c.cpu).toFixed(1).padStart(6)} µs CPU/req`);
console.log("");
const best = (label) => configs.find((c) => c.label === label)?.best;
const cpu = (label) => median(configs.find((c) => c.label === label)?.cpu ?? [Number.NaN]);
for (const kind of kinds) {
  const bareRps = best(`bare node:${kind === "h1" ? "http" : "http2"}`);
  const none = best(`${kind} no SDK`);
  const sdk = best(`${kind} SDK, no-op exporter`);
  const before = best(`${kind} before telemetry`);
  console.log(`${kind}: bare ${bareRps.toFixed(0)}, no SDK ${none.toFixed(0)} (${(none / bareRps).toFixed(2)}x bare), SDK ${sdk.toFixed(0)}`);
  if (before) console.log(`${kind}: no SDK / before telemetry = ${(none / before).toFixed(3)} (target >= 0.98)`);
  console.log(`${kind}: SDK + no-op exporter / no SDK = ${(sdk / none).toFixed(3)} (target >= 0.85)`);
  const noneCpu = cpu(`${kind} no SDK`);
  console.log(`${kind}: CPU/req, SDK + no-op exporter vs no SDK: +${(cpu(`${kind} SDK, no-op exporter`) - noneCpu).toFixed(1)} µs on ${noneCpu.toFixed(1)}`);
  for (const c of configs.filter((x) => x.kind === kind && /only|no size|sampled|off|no context/.test(x.label))) {
    console.log(`${kind}: ${c.label.slice(3)} / no SDK = ${(c.best / none).toFixed(3)}, CPU/req +${(median(c.cpu) - noneCpu).toFixed(1)} µs`);
  }
}
