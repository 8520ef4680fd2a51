// Mounted handler vs createServer, gRPC unary: triple-rpc's greet service served by
//   - createServer (its own one-port listener), and
//   - createHandler mounted in a bare `http2.createServer(handler)` (node's compatibility API),
//   - and, for HTTP/1.1 Triple JSON, createHandler in `http.createServer(handler)` vs createServer (autocannon).
//
//   node bench/adapters.mjs                    (after `npm run build`)
//   DURATION=10 ROUNDS=3 node bench/adapters.mjs
//
// Servers run pinned to CPU 0 and the load generator (h2load -c16 -m32, autocannon -c32) to CPU 1,
// one server at a time, rounds alternating so drift hits both alike. The script re-runs itself
// with `--serve <kind> <port>`.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { freePort, pinned, stop } from "./harness.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DIST = resolve(ROOT, process.env.DIST ?? "dist");
const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const require = createRequire(import.meta.url);

const MESSAGE = Buffer.from([0x0a, 0x06, ...Buffer.from("triple")]);
const FRAME = Buffer.concat([Buffer.from([0, 0, 0, 0, MESSAGE.length]), MESSAGE]);

async function serve(kind, port) {
  const { createServer, createHandler } = require(join(DIST, "src/index.js"));
  const { GreetServiceImpl } = require(join(DIST, "samples/greet/greet-service.js"));
  const services = [new GreetServiceImpl()];
  if (kind === "createServer") await createServer({ services }).listen({ port, host: "127.0.0.1" });
  else {
    const handler = createHandler({ services });
    const server =
      kind === "handler-h2"
        ? http2.createServer(handler)
        : kind === "stream-h2"
          ? http2.createServer().on("stream", handler.onStream)
          : http.createServer({ keepAliveTimeout: 5000 }, handler);
    await new Promise((r) => server.listen(port, "127.0.0.1", r));
  }
  console.log("ready");
}

async function start(kind, port) {
  const [cmd, argv] = pinned("0", process.execPath, [fileURLToPath(import.meta.url), "--serve", kind, String(port)]);
  const child = spawn(cmd, argv, { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((ok, fail) => {
    child.stdout.on("data", (c) => /ready/.test(c.toString()) && ok());
    child.once("exit", (code) => fail(new Error(`${kind} exited with ${code}`)));
  });
  return child;
}

function run(cmd, args) {
  const [c, a] = pinned("1", cmd, args);
  return new Promise((ok, fail) => {
    const p = spawn(c, a, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.once("exit", () => ok(out));
    p.once("error", fail);
  });
}

async function h2load(port, bodyFile) {
  const out = await run("h2load", [
    "-c16",
    "-m32",
    "-t1",
    "-D",
    String(DURATION),
    "-d",
    bodyFile,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    `http://127.0.0.1:${port}/greet.GreetService/Greet`,
  ]);
  const rps = /finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out);
  const ok = /status codes: (\d+) 2xx/.exec(out);
  if (!rps) throw new Error(`h2load said:\n${out}`);
  return { rps: Number(rps[1]), ok: Number(ok?.[1] ?? 0) };
}

async function autocannon(port) {
  const bin = join(ROOT, "node_modules/autocannon/autocannon.js");
  const out = await run(process.execPath, [
    bin,
    "-j",
    "-c",
    "32",
    "-d",
    String(DURATION),
    "-m",
    "POST",
    "-H",
    "content-type=application/json",
    "-b",
    '{"name":"triple"}',
    `http://127.0.0.1:${port}/greet.GreetService/Greet`,
  ]);
  const j = JSON.parse(out);
  return { rps: j.requests.average, ok: j["2xx"] };
}

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "bench-adapters-"));
  const bodyFile = join(dir, "greet.bin");
  writeFileSync(bodyFile, FRAME);
  const table = [
    { name: "gRPC unary, createServer", kind: "createServer", load: h2load },
    { name: "gRPC unary, createHandler in http2.createServer", kind: "handler-h2", load: h2load },
    { name: "gRPC unary, handler.onStream on http2.createServer()", kind: "stream-h2", load: h2load },
    { name: "Triple JSON HTTP/1.1, createServer", kind: "createServer", load: autocannon },
    { name: "Triple JSON HTTP/1.1, createHandler in http.createServer", kind: "handler-h1", load: autocannon },
  ];
  const results = new Map(table.map((t) => [t.name, []]));
  // Server CPU per successful call: steadier than throughput on a shared machine.
  const cpu = new Map(table.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of table) {
      const port = await freePort();
      const child = await start(t.kind, port);
      // taskset execs node in place, so the child's pid is the server's.
      try {
        const cpu0 = cpuSeconds(child.pid);
        const r = await t.load(port, bodyFile);
        const usPerCall = ((cpuSeconds(child.pid) - cpu0) * 1e6) / Math.max(1, r.ok);
        if (r.ok === 0) throw new Error(`${t.name}: no successful response`);
        results.get(t.name).push(r.rps);
        cpu.get(t.name).push(usPerCall);
        console.error(`round ${round + 1} ${t.name}: ${Math.round(r.rps)} req/s, ${usPerCall.toFixed(1)} µs server CPU per call`);
      } finally {
        await stop(child);
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`\nmedian of ${ROUNDS} rounds, ${DURATION} s each:`);
  for (const [name, xs] of results) {
    console.log(`  ${name.padEnd(58)} ${String(Math.round(median(xs))).padStart(8)} req/s  ${median(cpu.get(name)).toFixed(1).padStart(7)} µs CPU/call`);
  }
  const g = median(results.get(table[1].name)) / median(results.get(table[0].name));
  const h = median(results.get(table[4].name)) / median(results.get(table[3].name));
  const s = median(results.get(table[2].name)) / median(results.get(table[0].name));
  console.log(`  mounted / createServer throughput: gRPC ${(g * 100).toFixed(1)} % (onStream ${(s * 100).toFixed(1)} %), HTTP/1.1 ${(h * 100).toFixed(1)} %`);
  const gc = median(cpu.get(table[1].name)) / median(cpu.get(table[0].name));
  const hc = median(cpu.get(table[4].name)) / median(cpu.get(table[3].name));
  const sc = median(cpu.get(table[2].name)) / median(cpu.get(table[0].name));
  console.log(
    `  mounted / createServer CPU per call: gRPC ${(gc * 100).toFixed(1)} % (onStream ${(sc * 100).toFixed(1)} %), HTTP/1.1 ${(hc * 100).toFixed(1)} %`,
  );
}

if (process.argv[2] === "--serve") await serve(process.argv[3], Number(process.argv[4]));
else await main();
