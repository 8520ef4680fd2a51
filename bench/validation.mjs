#!/usr/bin/env node
// Validation cost (issue 28): the same method with and without five constraints (pattern, min,
// max, maxLength, format), in one server process pinned to CPU 0, loaded from CPU 1 in
// alternating rounds. Target: the checked method within 10 % of the plain one.
//
//   npm run build && node bench/validation.mjs           # 5 s runs, 3 rounds, HTTP/1.1 and HTTP/2
//   DURATION=10 ROUNDS=5 node bench/validation.mjs
//
// HTTP/1.1 load: autocannon (Triple HTTP JSON); HTTP/2 load: h2load (Connect JSON), if installed.
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
const BODY = JSON.stringify({ sku: "AB-12", qty: 2, note: "gift wrap", email: "ann@example.com" });

function run(cmd, args) {
  const [c, a] = pinned("1", cmd, args);
  return execFileSync(c, a, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

const have = (cmd) => {
  try {
    execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

function autocannon(port, svc, seconds) {
  const out = run(path.join(root, "node_modules", ".bin", "autocannon"), [
    "-c",
    String(CONNECTIONS),
    "-d",
    String(seconds),
    "-m",
    "POST",
    "-H",
    "content-type=application/json",
    "-b",
    BODY,
    "--json",
    `http://127.0.0.1:${port}/${svc}/place`,
  ]);
  const r = JSON.parse(out);
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`autocannon: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

function h2load(port, svc, seconds) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "validation-bench-"));
  const data = path.join(dir, "body.json");
  fs.writeFileSync(data, BODY);
  try {
    const out = run("h2load", [
      "-c",
      "4",
      "-m",
      "16",
      "-D",
      String(seconds),
      "-d",
      data,
      "-H",
      "content-type: application/json",
      "-H",
      "connect-protocol-version: 1",
      `http://127.0.0.1:${port}/${svc}/place`,
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

/** One call of each before loading: both must answer 200 with the same result. */
async function check(port) {
  const answers = [];
  for (const svc of ["bench.Plain", "bench.Checked"]) {
    const r = await fetch(`http://127.0.0.1:${port}/${svc}/place`, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
    answers.push(`${r.status} ${await r.text()}`);
  }
  if (!answers[0].startsWith("200 ") || answers[0] !== answers[1]) throw new Error(`unexpected answers: ${answers.join(" | ")}`);
  const bad = await fetch(`http://127.0.0.1:${port}/bench.Checked/place`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sku: "x", qty: 0, email: "y" }),
  });
  if (bad.status !== 400) throw new Error(`the checked method accepted invalid arguments: ${bad.status}`);
}

const port = await freePort();
const server = await startServer([path.join(here, "validation-server.mjs"), String(port)], {}, "ready");
const loads = [["HTTP/1.1 Triple JSON (autocannon)", autocannon]];
if (have("h2load")) loads.push(["HTTP/2 Connect JSON (h2load)", h2load]);
else console.log("h2load not found (apt-get install nghttp2-client): HTTP/2 skipped");
console.log(`node ${process.version}, ${os.cpus().length} CPUs, ${DURATION} s runs, ${ROUNDS} rounds; server on CPU 0, load on CPU 1`);
try {
  await check(port);
  for (const [name, load] of loads) {
    const best = { "bench.Plain": 0, "bench.Checked": 0 };
    for (const svc of Object.keys(best)) load(port, svc, WARMUP);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const svc of Object.keys(best)) {
        const rps = load(port, svc, DURATION);
        best[svc] = Math.max(best[svc], rps);
        console.log(`${name} round ${round}: ${svc.padEnd(14)} ${rps.toFixed(0).padStart(8)} req/s`);
      }
    }
    const ratio = best["bench.Checked"] / best["bench.Plain"];
    console.log(
      `${name}: best plain ${best["bench.Plain"].toFixed(0)} req/s, best checked ${best["bench.Checked"].toFixed(0)} req/s, ` +
        `ratio ${ratio.toFixed(3)} (target >= 0.90) ${ratio >= 0.9 ? "ok" : "BELOW TARGET"}\n`,
    );
  }
} finally {
  await stop(server);
}
