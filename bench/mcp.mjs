#!/usr/bin/env node
// MCP cost (issue 39): a tool call (`tools/call` of `quote` at POST /mcp) against the same method
// over Connect JSON (POST /bench.Shop/quote, `connect-protocol-version: 1`) on the same server
// (bench/mcp-server.mjs, CPU 0), loaded by autocannon from CPU 1 (HTTP/1.1, keep-alive) in
// alternating rounds; prints the ratio of the best rounds. SDK=1 adds the official SDK's
// stateless server (MODE=sdk) with the same tool, for the per-call cost of using it instead.
//
//   npm run build && node bench/mcp.mjs            # 5 s runs, 3 rounds
//   DURATION=10 ROUNDS=5 SDK=1 node bench/mcp.mjs
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, pinned, startServer, stop } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const DURATION = Number(process.env.DURATION ?? 5);
const WARMUP = Number(process.env.WARMUP ?? 1);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const ARGS = { sku: "AB-12", qty: 4 };
const MCP_HEADERS = ["content-type=application/json", "accept=application/json, text/event-stream", "mcp-protocol-version=2025-11-25"];
const LOADS = {
  connect: { path: "/bench.Shop/quote", headers: ["content-type=application/json", "connect-protocol-version=1"], body: JSON.stringify(ARGS) },
  mcp: {
    path: "/mcp",
    headers: MCP_HEADERS,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "quote", arguments: ARGS } }),
  },
};

/**
 * The server's CPU time so far (user + system, ms), from /proc: CPU time per request says what a
 * call costs even on a loaded machine, where req/s only says how much CPU the server got.
 */
function cpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

function autocannon(port, load, seconds) {
  const headers = load.headers.flatMap((h) => ["-H", h]);
  const [c, a] = pinned("1", path.join(root, "node_modules", ".bin", "autocannon"), [
    "-c",
    String(CONNECTIONS),
    "-d",
    String(seconds),
    "-m",
    "POST",
    ...headers,
    "-b",
    load.body,
    "--json",
    `http://127.0.0.1:${port}${load.path}`,
  ]);
  const r = JSON.parse(execFileSync(c, a, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }));
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`autocannon ${load.path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, total: r.requests.total };
}

/** One call of each before loading: the same result both ways. */
async function check(port, kinds) {
  const results = [];
  for (const k of kinds) {
    const load = LOADS[k];
    const headers = Object.fromEntries(load.headers.map((h) => h.split("=")));
    const r = await fetch(`http://127.0.0.1:${port}${load.path}`, { method: "POST", headers, body: load.body });
    const json = await r.json();
    if (r.status !== 200) throw new Error(`${k}: ${r.status} ${JSON.stringify(json)}`);
    results.push(JSON.stringify(k === "mcp" ? json.result.structuredContent : json));
  }
  if (new Set(results).size !== 1) throw new Error(`different results: ${results.join(" | ")}`);
}

async function measure(mode, kinds) {
  const port = await freePort();
  const server = await startServer([path.join(here, "mcp-server.mjs"), String(port)], { MODE: mode }, "ready");
  const best = Object.fromEntries(kinds.map((k) => [k, 0]));
  const cpu = Object.fromEntries(kinds.map((k) => [k, Number.POSITIVE_INFINITY]));
  try {
    await check(port, kinds);
    for (const k of kinds) autocannon(port, LOADS[k], WARMUP);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const k of kinds) {
        const c0 = cpuMs(server.pid);
        const { rps, total } = autocannon(port, LOADS[k], DURATION);
        const us = ((cpuMs(server.pid) - c0) * 1000) / total;
        best[k] = Math.max(best[k], rps);
        cpu[k] = Math.min(cpu[k], us);
        console.log(`${mode} round ${round}: ${k.padEnd(8)} ${rps.toFixed(0).padStart(8)} req/s, server CPU ${us.toFixed(0).padStart(5)} µs per call`);
      }
    }
  } finally {
    await stop(server);
  }
  return { best, cpu };
}

console.log(
  `node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, ${DURATION} s runs, ${ROUNDS} rounds; server on CPU 0, autocannon on CPU 1`,
);
const ours = await measure("ours", ["connect", "mcp"]);
console.log(
  `triple-rpc: best Connect JSON ${ours.best.connect.toFixed(0)} req/s (${ours.cpu.connect.toFixed(0)} µs CPU per call), ` +
    `best MCP tools/call ${ours.best.mcp.toFixed(0)} req/s (${ours.cpu.mcp.toFixed(0)} µs); ` +
    `MCP/Connect throughput ${(ours.best.mcp / ours.best.connect).toFixed(3)}, CPU per call ${(ours.cpu.mcp / ours.cpu.connect).toFixed(3)}`,
);
if (process.env.SDK) {
  const sdk = await measure("sdk", ["mcp"]);
  console.log(
    `official SDK server (stateless): best tools/call ${sdk.best.mcp.toFixed(0)} req/s (${sdk.cpu.mcp.toFixed(0)} µs CPU per call), ` +
      `CPU per call ${(sdk.cpu.mcp / ours.cpu.mcp).toFixed(1)}× triple-rpc's`,
  );
}
