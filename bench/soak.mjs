// Soak: N unary Greet calls (default 1,000,000) against the fixture server in a child process,
// a third each over HTTP/1.1 keep-alive (JSON), HTTP/2 (JSON) and gRPC (protobuf). Prints the server's heap and RSS after a
// full GC at the start (after warm-up) and at the end, and fails (exit 1) when either grew by
// 10 % or more, or when any call failed.
//
//   npm run build && node bench/soak.mjs                 # 1,000,000 calls
//   SOAK_CALLS=50000 node bench/soak.mjs                 # quick check
//   env: SOAK_CALLS, SOAK_WARMUP (CALLS/10, at most 100000), SOAK_CONCURRENCY (64),
//        SOAK_PROTO (all | both = h1 + h2 | h1 | h2 | grpc), SOAK_MAX_SECONDS (900),
//        DIST (dist: where the compiled fixture lives)
import { spawn, spawnSync } from "node:child_process";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as path from "node:path";

const CALLS = Number(process.env.SOAK_CALLS ?? process.argv[2] ?? 1_000_000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 64);
const PROTO = process.env.SOAK_PROTO ?? "all";
if (!["all", "both", "h1", "h2", "grpc"].includes(PROTO)) {
  console.error(`SOAK_PROTO must be all, both, h1, h2 or grpc, not "${PROTO}"`);
  process.exit(2);
}
const MAX_SECONDS = Number(process.env.SOAK_MAX_SECONDS ?? 900);
const DIST = process.env.DIST ?? "dist";
// Warm-up long enough for JIT, young-generation sizing and malloc arenas to settle: the start
// figures are the steady state, so growth measures leaks, not start-up.
const WARMUP = Number(process.env.SOAK_WARMUP ?? Math.min(100_000, Math.max(1_000, Math.floor(CALLS / 10))));
const LIMIT_PCT = 10;

const fixture = path.resolve(DIST, "test/robustness/fixture-server.js");
const hasTaskset = spawnSync("taskset", ["-V"]).status === 0;
const cpus = (await import("node:os")).availableParallelism();

// Pin the server to CPU 0 and this load generator to CPU 1, so the two do not fight for a core.
const cmd = hasTaskset && cpus > 1 ? "taskset" : process.execPath;
const args = hasTaskset && cpus > 1 ? ["-c", "0", process.execPath, "--expose-gc", fixture] : ["--expose-gc", fixture];
if (hasTaskset && cpus > 1) spawnSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" });

const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, FIXTURE_OPTIONS: "{}" } });
const port = await new Promise((resolve, reject) => {
  let out = "";
  child.stdout.on("data", (c) => {
    out += c;
    const m = /LISTENING (\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  });
  child.once("exit", (code) => reject(new Error(`fixture server exited with ${code} (did you build into ${DIST}?)`)));
});
const url = `http://127.0.0.1:${port}`;
const body = Buffer.from('{"name":"triple"}');

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
function h1Call(p = "/greet.GreetService/Greet", b = body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, path: p, method: "POST", agent, headers: { "content-type": "application/json", "content-length": b.length } },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(b);
  });
}

let session;
function h2Call() {
  return new Promise((resolve, reject) => {
    const st = session.request({ ":method": "POST", ":path": "/greet.GreetService/Greet", "content-type": "application/json" });
    let status = 0;
    const chunks = [];
    st.on("response", (h) => {
      status = h[":status"];
    });
    st.on("data", (c) => chunks.push(c));
    st.on("end", () => resolve({ status, text: Buffer.concat(chunks).toString() }));
    st.on("error", reject);
    st.end(body);
  });
}

// GreetRequest{name:"triple"} in a gRPC frame; the answer is GreetResponse{greeting:"triple"}.
const GRPC_FRAME = Buffer.from([0, 0, 0, 0, 8, 0x0a, 6, ...Buffer.from("triple")]);
function grpcCall() {
  return new Promise((resolve, reject) => {
    const st = session.request({
      ":method": "POST",
      ":path": "/greet.GreetService/Greet",
      "content-type": "application/grpc",
      te: "trailers",
    });
    let grpcStatus;
    const chunks = [];
    st.on("response", (h) => {
      grpcStatus = h["grpc-status"];
    });
    st.on("trailers", (t) => {
      grpcStatus = t["grpc-status"];
    });
    st.on("data", (c) => chunks.push(c));
    st.on("end", () => {
      const data = Buffer.concat(chunks);
      const ok = grpcStatus === "0" && data.equals(GRPC_FRAME);
      resolve({ status: ok ? 200 : 500, text: `grpc-status ${grpcStatus}, ${data.length} bytes` });
    });
    st.on("error", reject);
    st.end(GRPC_FRAME);
  });
}

/** Which protocol worker `w` uses. */
function protocolOf(w) {
  if (PROTO === "all") return ["h1", "h2", "grpc"][w % 3];
  if (PROTO === "both") return (w & 1) === 1 ? "h2" : "h1";
  return PROTO;
}
const CALLERS = { h1: () => h1Call(), h2: () => h2Call(), grpc: () => grpcCall() };

async function report() {
  const r = await h1Call("/robust.Probe/Report", Buffer.from("[]"));
  if (r.status !== 200) throw new Error(`probe failed: ${r.status} ${r.text}`);
  return JSON.parse(r.text);
}

let failures = 0;
let firstFailure;
const deadline = Date.now() + MAX_SECONDS * 1000;
let timedOut = false;

async function run(total) {
  let next = 0;
  const worker = async (w) => {
    while (next < total) {
      if (Date.now() > deadline) {
        timedOut = true;
        return;
      }
      const i = next++;
      try {
        const r = await CALLERS[protocolOf(w)]();
        if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
      } catch (e) {
        failures++;
        firstFailure ??= `call ${i}: ${e.message}`;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));
  return next;
}

const mib = (n) => (n / 1048576).toFixed(1);
const pct = (a, b) => ((b - a) / a) * 100;
let exitCode = 0;
try {
  session = http2.connect(url);
  session.on("error", () => {});
  await run(WARMUP);
  const start = await report();
  if (!start.gcRan) console.warn("warning: the server was not started with --expose-gc");
  console.log(
    `soak: ${CALLS} calls, concurrency ${CONCURRENCY}, protocol ${PROTO}, server ${url}${hasTaskset && cpus > 1 ? " (server on CPU 0, client on CPU 1)" : ""}`,
  );
  console.log(`start (after ${WARMUP} warm-up calls, after GC): heapUsed ${mib(start.heapUsed)} MiB, rss ${mib(start.rss)} MiB`);
  const t0 = Date.now();
  const done = await run(CALLS);
  const secs = (Date.now() - t0) / 1000;
  const end = await report();
  const heapGrowth = pct(start.heapUsed, end.heapUsed);
  const rssGrowth = pct(start.rss, end.rss);
  console.log(
    `end   (after ${done} calls in ${secs.toFixed(1)} s, ${Math.round(done / secs)} calls/s, after GC): heapUsed ${mib(end.heapUsed)} MiB, rss ${mib(end.rss)} MiB`,
  );
  console.log(`growth: heapUsed ${heapGrowth.toFixed(1)} %, rss ${rssGrowth.toFixed(1)} % (limit ${LIMIT_PCT} %); failed calls: ${failures}`);
  if (firstFailure) console.log(`first failure: ${firstFailure}`);
  if (timedOut) {
    console.log(`stopped at the ${MAX_SECONDS} s bound after ${done} of ${CALLS} calls`);
    exitCode = 2;
  }
  if (heapGrowth >= LIMIT_PCT || rssGrowth >= LIMIT_PCT || failures > 0) exitCode = 1;
  console.log(exitCode === 0 ? "soak: PASS" : "soak: FAIL");
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  session?.close();
  agent.destroy();
  child.kill("SIGTERM");
}
process.exitCode = exitCode;
