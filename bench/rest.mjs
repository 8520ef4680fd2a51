#!/usr/bin/env node
// REST benchmark (issue 28): one method, called as `GET /greet/triple` (a REST mapping with a path
// variable) and by its RPC path `POST /bench.RestGreeter/greet` with the JSON body `["triple"]`,
// on the same server in the same run. Server on CPU 0, load generator on CPU 1 (taskset).
// HTTP/1.1 load: autocannon; HTTP/2 load: h2load. Target: REST within 10 % of the RPC path.
//
//   npm run build && node bench/rest.mjs             # 5 s per run, 3 rounds, best round kept
//   DURATION=10 ROUNDS=5 node bench/rest.mjs
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, pinned, startServer, stop } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const DIST = process.env.DIST ?? "dist";
const DURATION = Number(process.env.DURATION ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const EXPECTED = '{"greeting":"triple"}';

const run = (cmd, args) => {
  const [c, a] = pinned("1", cmd, args);
  return execFileSync(c, a, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
};
const haveH2load = (() => {
  try {
    execFileSync("sh", ["-c", "command -v h2load"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const REST = { label: "REST GET /greet/{name}", method: "GET", path: "/greet/triple" };
const RPC = { label: "RPC POST .../greet", method: "POST", path: "/bench.RestGreeter/greet", body: '["triple"]' };

function autocannon(port, c, seconds) {
  const args = ["-c", String(CONNECTIONS), "-d", String(seconds), "-m", c.method, "--json"];
  if (c.body) args.push("-H", "content-type=application/json", "-b", c.body);
  const r = JSON.parse(run(path.join(root, "node_modules", ".bin", "autocannon"), [...args, `http://127.0.0.1:${port}${c.path}`]));
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`autocannon ${c.label}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

function h2load(port, c, seconds) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "triple-rest-bench-"));
  try {
    const args = ["-c", "4", "-m", "16", "-D", String(seconds)];
    if (c.body) {
      fs.writeFileSync(path.join(dir, "body"), c.body);
      args.push("-d", path.join(dir, "body"), "-H", "content-type: application/json");
    }
    const out = run("h2load", [...args, `http://127.0.0.1:${port}${c.path}`]);
    const m = /finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out);
    const st = /(\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
    if (!m || !st || Number(st[2]) + Number(st[3]) > 0) throw new Error(`h2load ${c.label}:\n${out}`);
    return Number(m[1]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function check(port, c) {
  const r = await fetch(`http://127.0.0.1:${port}${c.path}`, { method: c.method, headers: c.body ? { "content-type": "application/json" } : {}, body: c.body });
  const text = await r.text();
  if (r.status !== 200 || text !== EXPECTED) throw new Error(`${c.label}: unexpected answer ${r.status} ${text}`);
}

const port = await freePort();
const server = await startServer([path.join(root, DIST, "bench", "rest-server.js")], { PORT: String(port) }, "ready");
try {
  for (const c of [REST, RPC]) await check(port, c);
  const kinds = [["HTTP/1.1", autocannon]];
  if (haveH2load) kinds.push(["HTTP/2", h2load]);
  else console.log("h2load not found (apt-get install nghttp2-client): HTTP/2 skipped");
  console.log(`node ${process.version}, ${os.cpus().length} CPUs, ${DURATION} s runs, ${ROUNDS} rounds, best round kept`);
  for (const [name, load] of kinds) {
    for (const c of [REST, RPC]) load(port, c, 1); // warm-up
    const best = new Map();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const c of [REST, RPC]) {
        const rps = load(port, c, DURATION);
        best.set(c, Math.max(best.get(c) ?? 0, rps));
        console.log(`${name} round ${round}: ${c.label.padEnd(24)} ${rps.toFixed(0).padStart(8)} req/s`);
      }
    }
    const ratio = best.get(REST) / best.get(RPC);
    console.log(
      `${name} best: REST ${best.get(REST).toFixed(0)} req/s, RPC ${best.get(RPC).toFixed(0)} req/s, ratio ${ratio.toFixed(2)} (target >= 0.90) ${ratio >= 0.9 ? "ok" : "BELOW TARGET"}\n`,
    );
  }
} finally {
  await stop(server);
}
