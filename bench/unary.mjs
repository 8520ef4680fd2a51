#!/usr/bin/env node
// Unary benchmark: the greet sample (npm start's server) against bare node:http / node:http2
// servers answering the same bytes. Server on CPU 0, load generator on CPU 1 (taskset), so the
// two do not fight over one core. HTTP/1.1 load: autocannon; HTTP/2 load: h2load (nghttp2-client).
//
//   npm run build && node bench/unary.mjs            # 5 s per run after a 1 s warm-up
//   DURATION=10 CONNECTIONS=50 node bench/unary.mjs
//   DIST=dist-core ROUNDS=5 node bench/unary.mjs     # another tsc outDir, more rounds
//
// Prints req/s, p50 and p99 latency per server and round, the best round of each, and the
// ratio sample / bare.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as http2 from "node:http2";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startServer, stop } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const DIST = process.env.DIST ?? "dist";
const DURATION = Number(process.env.DURATION ?? 5);
const WARMUP = Number(process.env.WARMUP ?? 1);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const H2_STREAMS = Number(process.env.H2_STREAMS ?? 16); // concurrent streams per h2 connection
const H2_CONNECTIONS = Number(process.env.H2_CONNECTIONS ?? 4);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PATH = "/greet.GreetService/Greet";
const REQUEST = '{"name":"triple"}';
const EXPECTED = '{"greeting":"triple"}';

const have = (cmd) => {
  try {
    execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};
const pinned = (cpu, cmd, args) => (have("taskset") && os.cpus().length > 1 ? ["taskset", ["-c", String(cpu), cmd, ...args]] : [cmd, args]);

function run(cmd, args) {
  const [c, a] = pinned(1, cmd, args);
  return execFileSync(c, a, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

/** autocannon over HTTP/1.1 keep-alive; one request in flight per connection. */
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
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

/** h2load over h2c prior knowledge; latencies from its per-request log. */
function h2load(port, seconds) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "triple-bench-"));
  const data = path.join(dir, "req.json");
  const log = path.join(dir, "log.tsv");
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
      "--log-file",
      log,
      `http://127.0.0.1:${port}${PATH}`,
    ]);
    const m = /finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out);
    const st = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
    if (!m || !st) throw new Error(`cannot read h2load output:\n${out}`);
    if (Number(st[2]) > 0 || Number(st[3]) > 0) throw new Error(`h2load: ${st[2]} failed, ${st[3]} errored`);
    // Log lines: start time (µs since epoch), HTTP status, latency (µs).
    const lat = fs
      .readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => Number(l.split("\t")[2]))
      .filter((x) => Number.isFinite(x))
      .sort((a, b) => a - b);
    const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] / 1000;
    return { rps: Number(m[1]), p50: pct(50), p99: pct(99) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One call before loading, so a broken server fails loudly instead of producing fast errors. */
async function check(port, kind) {
  let status;
  let text = "";
  if (kind === "h1") {
    const r = await fetch(`http://127.0.0.1:${port}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: REQUEST,
    });
    status = r.status;
    text = await r.text();
  } else {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    [status, text] = await new Promise((resolve, reject) => {
      const s = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/json" });
      let st = 0;
      let body = "";
      s.on("response", (h) => (st = h[":status"]));
      s.setEncoding("utf8");
      s.on("data", (d) => (body += d));
      s.on("end", () => resolve([st, body]));
      s.on("error", reject);
      s.end(REQUEST);
    });
    session.close();
  }
  if (status !== 200 || text !== EXPECTED) throw new Error(`unexpected answer ${status} ${text}`);
}

/** One load run against a running server. */
function load(kind, port, seconds) {
  return kind === "h1" ? autocannon(port, seconds) : h2load(port, seconds);
}

const sample = (port) => startServer([path.join(root, DIST, "samples", "greet", "server.js")], { PORT: String(port), HOST: "127.0.0.1" }, "listening on");
const bare = (kind) => (port) => startServer([path.join(here, "bare-server.mjs"), kind, String(port)], {}, "ready");

if (!fs.existsSync(path.join(root, DIST, "samples", "greet", "server.js"))) {
  console.error(`${DIST}/samples/greet/server.js is missing: run npm run build first`);
  process.exit(1);
}

const fmt = (r) =>
  `${r.label.padEnd(26)} ${r.rps.toFixed(0).padStart(9)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms`;

console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ${DURATION} s runs, ${ROUNDS} rounds`);
console.log(`HTTP/1.1: autocannon, ${CONNECTIONS} connections; HTTP/2: h2load, ${H2_CONNECTIONS} connections x ${H2_STREAMS} streams\n`);

// Every server starts once (pinned to CPU 0) and is warmed up; then the configurations take
// turns for ROUNDS rounds. The machine may be shared: interference only ever lowers throughput,
// so each configuration's best round is reported (with that round's latencies).
const configs = [
  { label: "bare node:http", kind: "h1", start: bare("h1") },
  { label: "triple-rpc HTTP/1.1 JSON", kind: "h1", start: sample },
];
if (have("h2load")) {
  configs.push({ label: "bare node:http2 (stream)", kind: "h2", start: bare("h2") }, { label: "triple-rpc HTTP/2 JSON", kind: "h2", start: sample });
} else {
  console.log("h2load not found (apt-get install nghttp2-client): HTTP/2 skipped");
}
const children = [];
try {
  for (const c of configs) {
    c.port = await freePort();
    const child = await c.start(c.port);
    children.push(child);
    await check(c.port, c.kind);
    load(c.kind, c.port, WARMUP); // JIT warm-up, connection setup: not reported
  }
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of configs) {
      const r = load(c.kind, c.port, DURATION);
      if (!c.best || r.rps > c.best.rps) c.best = r;
      console.log(`round ${round}: ${fmt({ label: c.label, ...r })}`);
    }
  }
} finally {
  await Promise.all(children.map(stop));
}

console.log(`\nbest of ${ROUNDS} rounds:`);
for (const c of configs) console.log(fmt({ label: c.label, ...c.best }));
console.log("");
const ratio = (ours, base, name, target) => {
  const r = configs[ours].best.rps / configs[base].best.rps;
  console.log(`${name.padEnd(14)} ratio ${r.toFixed(2)} (target >= ${target}) ${r >= target ? "ok" : "BELOW TARGET"}`);
};
ratio(1, 0, "HTTP/1.1 JSON", 0.85);
if (configs.length > 2) ratio(3, 2, "HTTP/2 JSON", 0.9);
