#!/usr/bin/env node
// Protocols benchmark: one greet sample server (npm start's), called unary over each protocol it
// speaks, so the figures compare the protocols' own cost on the same server:
//   HTTP/1.1 (autocannon, 32 connections): Triple JSON, Connect JSON, gRPC-Web binary;
//   HTTP/2 (h2load, 16 connections x 32 streams): gRPC, gRPC-Web binary, Connect binary.
// The server runs on CPU 0, the load generator on CPU 1; the configurations take turns for
// ROUNDS rounds and each one's best round is reported.
//
//   npm run build && node bench/protocols.mjs        # DURATION=5 ROUNDS=3 WARMUP=1
//   DIST=dist-before node bench/protocols.mjs        # another build, for before/after figures
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
const WARMUP = Number(process.env.WARMUP ?? 1);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const URL_PATH = "/greet.GreetService/Greet";
// GreetRequest{name:"triple"}: 0a 06 "triple"; framed with gRPC's 5-byte prefix.
const MESSAGE = Buffer.from([0x0a, 0x06, ...Buffer.from("triple")]);
const FRAME = Buffer.concat([Buffer.from([0, 0, 0, 0, MESSAGE.length]), MESSAGE]);
const JSON_BODY = '{"name":"triple"}';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "triple-protocols-"));
const file = (name, data) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, data);
  return p;
};
const FILES = { json: file("req.json", JSON_BODY), frame: file("req.frame", FRAME), proto: file("req.bin", MESSAGE) };

function run(cmd, args) {
  const [c, a] = pinned("1", cmd, args);
  return execFileSync(c, a, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
}

/** autocannon over HTTP/1.1 keep-alive, 32 connections; `headers` as "name=value". */
function autocannon(port, seconds, headers, bodyFile) {
  const bin = path.join(root, "node_modules", ".bin", "autocannon");
  const args = ["-c", "32", "-d", String(seconds), "-m", "POST", "--json", "-i", bodyFile];
  for (const h of headers) args.push("-H", h);
  const r = JSON.parse(run(bin, [...args, `http://127.0.0.1:${port}${URL_PATH}`]));
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`autocannon: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.average;
}

/** h2load over h2c prior knowledge, 16 connections x 32 streams. */
function h2load(port, seconds, headers, bodyFile) {
  const args = ["-c16", "-m32", "-t1", "-D", String(seconds), "-d", bodyFile];
  for (const h of headers) args.push("-H", h);
  const out = run("h2load", [...args, `http://127.0.0.1:${port}${URL_PATH}`]);
  const m = /finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out);
  const st = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
  if (!m || !st) throw new Error(`cannot read h2load output:\n${out}`);
  if (Number(st[2]) > 0 || Number(st[3]) > 0) throw new Error(`h2load: ${st[2]} failed, ${st[3]} errored`);
  return Number(m[1]);
}

const CONFIGS = [
  { label: "Triple JSON, HTTP/1.1", load: (p, s) => autocannon(p, s, ["content-type=application/json"], FILES.json) },
  { label: "Connect JSON, HTTP/1.1", load: (p, s) => autocannon(p, s, ["content-type=application/json", "connect-protocol-version=1"], FILES.json) },
  { label: "gRPC-Web binary, HTTP/1.1", load: (p, s) => autocannon(p, s, ["content-type=application/grpc-web+proto", "x-grpc-web=1"], FILES.frame) },
  { label: "gRPC, HTTP/2", load: (p, s) => h2load(p, s, ["content-type: application/grpc", "te: trailers"], FILES.frame) },
  { label: "gRPC-Web binary, HTTP/2", load: (p, s) => h2load(p, s, ["content-type: application/grpc-web+proto", "x-grpc-web: 1"], FILES.frame) },
  { label: "Connect binary, HTTP/2", load: (p, s) => h2load(p, s, ["content-type: application/proto", "connect-protocol-version: 1"], FILES.proto) },
];

/** One call of each configuration's shape, checked, so a broken protocol fails loudly. */
async function check(port) {
  const post = (headers, body) => fetch(`http://127.0.0.1:${port}${URL_PATH}`, { method: "POST", headers, body });
  const triple = await post({ "content-type": "application/json" }, JSON_BODY);
  const connect = await post({ "content-type": "application/json", "connect-protocol-version": "1" }, JSON_BODY);
  const web = await post({ "content-type": "application/grpc-web+proto" }, FRAME);
  const webBody = Buffer.from(await web.arrayBuffer());
  const texts = [await triple.text(), await connect.text()];
  if (texts.some((t) => t !== '{"greeting":"triple"}') || !/grpc-status: ?0\r\n/.test(webBody.toString("latin1"))) {
    throw new Error(`unexpected answers: ${texts.join(" | ")} | ${webBody.toString("latin1")}`);
  }
}

const server = path.join(root, DIST, "samples", "greet", "server.js");
if (!fs.existsSync(server)) {
  console.error(`${server} is missing: run npm run build first`);
  process.exit(1);
}
console.log(`node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), ${DIST}, ${DURATION} s runs, ${ROUNDS} rounds\n`);
const port = await freePort();
const child = await startServer([server], { PORT: String(port), HOST: "127.0.0.1" }, "listening on");
try {
  await check(port);
  for (const c of CONFIGS) c.load(port, WARMUP);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const c of CONFIGS) {
      const rps = c.load(port, DURATION);
      c.best = Math.max(c.best ?? 0, rps);
      console.log(`round ${round}: ${c.label.padEnd(28)} ${rps.toFixed(0).padStart(8)} req/s`);
    }
  }
} finally {
  await stop(child);
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`\nbest of ${ROUNDS} rounds:`);
for (const c of CONFIGS) console.log(`${c.label.padEnd(28)} ${c.best.toFixed(0).padStart(8)} req/s`);
const best = (label) => CONFIGS.find((c) => c.label === label).best;
const ratio = (name, a, b, target) => {
  const r = best(a) / best(b);
  console.log(`${name.padEnd(40)} ${r.toFixed(2)} (target >= ${target}) ${r >= target ? "ok" : "BELOW TARGET"}`);
};
console.log("");
ratio("Connect JSON h1 / Triple JSON h1", "Connect JSON, HTTP/1.1", "Triple JSON, HTTP/1.1", 0.95);
ratio("gRPC-Web h2 / gRPC h2", "gRPC-Web binary, HTTP/2", "gRPC, HTTP/2", 0.8);
