#!/usr/bin/env node
// Unary benchmark: the greet sample (npm start's server) against bare node:http / node:http2
// servers answering the same bytes. Server on CPU 0, load generator on CPU 1 (taskset), so the
// two do not fight over one core. HTTP/1.1 load: autocannon; HTTP/2 load: h2load (nghttp2-client).
//
//   npm run build && node bench/unary.mjs            # 5 s per run after a 1 s warm-up
//   DURATION=10 CONNECTIONS=50 node bench/unary.mjs
//   DIST=dist-core node bench/unary.mjs              # another tsc outDir
//
// Prints req/s, p50 and p99 latency per server and the ratio sample / bare.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http2 from "node:http2";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const DIST = process.env.DIST ?? "dist";
const DURATION = Number(process.env.DURATION ?? 5);
const WARMUP = Number(process.env.WARMUP ?? 1);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const H2_STREAMS = Number(process.env.H2_STREAMS ?? 16); // concurrent streams per h2 connection
const H2_CONNECTIONS = Number(process.env.H2_CONNECTIONS ?? 4);
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

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Starts a server process on CPU 0 and waits until it prints `marker`. */
function startServer(args, env, marker) {
  const [cmd, argv] = pinned(0, process.execPath, args);
  const child = spawn(cmd, argv, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes(marker)) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", resolve);
    child.kill("SIGTERM");
  });
}

function run(cmd, args) {
  const [c, a] = pinned(1, cmd, args);
  return execFileSync(c, a, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

/** autocannon over HTTP/1.1 keep-alive; one request in flight per connection. */
function autocannon(port, seconds) {
  const bin = path.join(root, "node_modules", ".bin", "autocannon");
  const out = run(bin, [
    "-c", String(CONNECTIONS), "-d", String(seconds), "-m", "POST",
    "-H", "content-type=application/json", "-b", REQUEST, "--json",
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
      "-c", String(H2_CONNECTIONS), "-m", String(H2_STREAMS), "-D", String(seconds),
      "--warm-up-time", String(WARMUP), "-d", data, "-H", "content-type: application/json",
      "--log-file", log, `http://127.0.0.1:${port}${PATH}`,
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

async function measure(label, kind, startFn) {
  const port = await freePort();
  const child = await startFn(port);
  try {
    await check(port, kind);
    if (kind === "h1") {
      autocannon(port, WARMUP); // warm-up (JIT, connection setup); not reported
      return { label, ...autocannon(port, DURATION) };
    }
    return { label, ...h2load(port, DURATION) };
  } finally {
    await stop(child);
  }
}

const sample = (port) =>
  startServer([path.join(root, DIST, "samples", "greet", "server.js")], { PORT: String(port), HOST: "127.0.0.1" }, "listening on");
const bare = (kind) => (port) => startServer([path.join(here, "bare-server.mjs"), kind, String(port)], {}, "ready");

if (!fs.existsSync(path.join(root, DIST, "samples", "greet", "server.js"))) {
  console.error(`${DIST}/samples/greet/server.js is missing: run npm run build first`);
  process.exit(1);
}

const fmt = (r) =>
  `${r.label.padEnd(26)} ${r.rps.toFixed(0).padStart(9)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(6)} ms`;

console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ${DURATION} s runs`);
console.log(`HTTP/1.1: autocannon, ${CONNECTIONS} connections; HTTP/2: h2load, ${H2_CONNECTIONS} connections x ${H2_STREAMS} streams\n`);

const results = [];
const h1Bare = await measure("bare node:http", "h1", bare("h1"));
console.log(fmt(h1Bare));
const h1Ours = await measure("triple-rpc HTTP/1.1 JSON", "h1", sample);
console.log(fmt(h1Ours));
results.push(["HTTP/1.1 JSON", h1Ours.rps / h1Bare.rps, 0.7]);
if (have("h2load")) {
  const h2Bare = await measure("bare node:http2 (stream)", "h2", bare("h2"));
  console.log(fmt(h2Bare));
  const h2Ours = await measure("triple-rpc HTTP/2 JSON", "h2", sample);
  console.log(fmt(h2Ours));
  results.push(["HTTP/2 JSON", h2Ours.rps / h2Bare.rps, 0.8]);
} else {
  console.log("h2load not found (apt-get install nghttp2-client): HTTP/2 skipped");
}
console.log("");
for (const [name, ratio, target] of results) {
  console.log(`${name.padEnd(14)} ratio ${ratio.toFixed(2)} (target >= ${target}) ${ratio >= target ? "ok" : "BELOW TARGET"}`);
}
