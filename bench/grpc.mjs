// gRPC benchmark: triple-rpc's greet sample vs @grpc/grpc-js vs a bare node:http2 server.
//
//   node bench/grpc.mjs                       (after `npm run build`)
//   DURATION=10 DIST=dist node bench/grpc.mjs
//
// Unary: h2load, 16 connections x 32 streams, POST /greet.GreetService/Greet with a framed
// GreetRequest{name:"triple"}. Streaming: messages/s over one GreetStream bidi stream, driven by
// a node:http2 client that keeps a bounded window of messages in flight. Servers run pinned to
// CPU 0 and load generators to CPU 1 (taskset), one server at a time, a fresh one for the unary and
// for the streaming run; RSS is each server's peak while under load. The script re-runs itself
// with `--serve <kind> <port>` for the baselines.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { freePort, pinned } from "./harness.mjs";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DIST = resolve(ROOT, process.env.DIST ?? "dist");
const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 2);
const GREET_PROTO = join(ROOT, "samples/greet/greet.proto");
const SERVER_CPU = process.env.SERVER_CPU ?? "0";
const CLIENT_CPU = process.env.CLIENT_CPU ?? "1";
// Node flags for all three servers alike, e.g. SERVER_FLAGS="--max-old-space-size=1024".
const SERVER_FLAGS = (process.env.SERVER_FLAGS ?? "").split(/\s+/).filter(Boolean);

// GreetRequest{name:"triple"} and GreetResponse{greeting:"triple"} encode to the same 8 bytes.
const MESSAGE = Buffer.from([0x0a, 0x06, ...Buffer.from("triple")]);
const frame = (m) => Buffer.concat([Buffer.from([0, 0, 0, 0, m.length]), m]);
const FRAME = frame(MESSAGE);

// ---------------------------------------------------------------------------------------------
// Baseline servers (run in a child process: `node bench/grpc.mjs --serve grpc-js|bare <port>`).

async function serveGrpcJs(port) {
  const grpc = await import("@grpc/grpc-js");
  const loader = await import("@grpc/proto-loader");
  const def = loader.loadSync(GREET_PROTO, { keepCase: true });
  const pkg = grpc.loadPackageDefinition(def);
  const server = new grpc.Server();
  server.addService(pkg.greet.GreetService.service, {
    Greet(call, cb) {
      if (call.request.name !== "triple") cb({ code: grpc.status.UNKNOWN, details: `name is not right: ${call.request.name}` });
      else cb(null, { greeting: call.request.name });
    },
    GreetStream(call) {
      call.on("data", (r) => call.write({ greeting: r.name }));
      call.on("end", () => call.end());
    },
  });
  await new Promise((ok, fail) => server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? fail(e) : ok())));
  console.log("ready");
}

function serveBare(port) {
  // The least a gRPC server can do: answer every stream with the same framed bytes and trailers.
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("data", () => {});
    stream.on("end", () => {
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(FRAME);
    });
  });
  server.listen(port, "127.0.0.1", () => console.log("ready"));
}

// ---------------------------------------------------------------------------------------------
// Harness.

async function startServer(kind, port) {
  const args = kind === "triple-rpc" ? [join(DIST, "samples/greet/server.js")] : [fileURLToPath(import.meta.url), "--serve", kind, String(port)];
  const [cmd, argv] = pinned(SERVER_CPU, process.execPath, [...SERVER_FLAGS, ...args]);
  const child = spawn(cmd, argv, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((ok, fail) => {
    child.stdout.on("data", (c) => {
      if (/ready|listening/.test(c.toString())) ok();
    });
    child.once("exit", (code) => fail(new Error(`${kind} server exited with ${code}`)));
  });
  return child;
}

function stop(child) {
  return new Promise((ok) => {
    if (child.exitCode !== null) return ok();
    child.once("exit", ok);
    child.kill("SIGKILL");
  });
}

/**
 * Peak RSS (MiB) of a process, sampled every 100 ms until `stop()`, and how much of that peak was
 * the C heap (glibc's `[heap]` mapping: nghttp2 and node's native memory), read from `smaps` only
 * when a new peak is seen.
 */
function rssSampler(pid) {
  let peak = 0;
  let nativeAtPeak;
  const read = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      const rss = m ? Number(m[1]) / 1024 : 0;
      if (rss <= peak) return;
      peak = rss;
      const heap = /\[heap\]\n(?:[^\n]*\n)*?Rss:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps`, "utf8"));
      nativeAtPeak = heap ? Number(heap[1]) / 1024 : undefined;
    } catch {
      // the process is gone
    }
  };
  const timer = setInterval(read, 100);
  return () => {
    clearInterval(timer);
    read();
    return { peak, nativeAtPeak };
  };
}

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** One checked Greet call, so a server that answers errors fast cannot win. */
async function checkGreet(port) {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  try {
    const r = await new Promise((ok, fail) => {
      const s = session.request({ ":method": "POST", ":path": "/greet.GreetService/Greet", "content-type": "application/grpc", te: "trailers" });
      const chunks = [];
      let trailers = {};
      s.on("data", (c) => chunks.push(c));
      s.on("trailers", (t) => (trailers = t));
      s.on("end", () => ok({ body: Buffer.concat(chunks), trailers }));
      s.on("error", fail);
      s.end(FRAME);
    });
    if (r.trailers["grpc-status"] !== "0" || !r.body.equals(FRAME)) {
      throw new Error(`Greet check failed: grpc-status ${r.trailers["grpc-status"]} ${r.trailers["grpc-message"] ?? ""}`);
    }
  } finally {
    session.close();
  }
}

function h2load(port, seconds, bodyFile) {
  const [cmd, argv] = pinned(CLIENT_CPU, "h2load", [
    "-c16",
    "-m32",
    "-t1",
    "-D",
    String(seconds),
    "-d",
    bodyFile,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    `http://127.0.0.1:${port}/greet.GreetService/Greet`,
  ]);
  return new Promise((ok, fail) => {
    const p = spawn(cmd, argv, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.once("exit", () => {
      const rps = /finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out);
      const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
      const reqs = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out);
      if (!rps) return fail(new Error(`h2load said:\n${out}`));
      ok({ rps: Number(rps[1]), ok2xx: Number(codes?.[1] ?? 0), failed: Number(reqs?.[5] ?? 0) + Number(reqs?.[6] ?? 0) });
    });
  });
}

/**
 * The streaming load client (its own process, pinned): one GreetStream, requests written in
 * batches while fewer than WINDOW are unanswered, responses counted. Prints messages/s.
 */
async function streamClient(port, seconds) {
  const WINDOW = 4096;
  const BATCH = 64;
  const batch = Buffer.concat(Array.from({ length: BATCH }, () => FRAME));
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const s = session.request({ ":method": "POST", ":path": "/greet.GreetService/GreetStream", "content-type": "application/grpc", te: "trailers" });
  let sent = 0;
  let received = 0;
  let pending = Buffer.alloc(0);
  let writing = false;
  let done = false;
  let measureFrom = 0;
  let countedAtStart = 0;
  const pump = () => {
    if (writing || done) return;
    writing = true;
    while (!done && sent - received < WINDOW) {
      sent += BATCH;
      if (!s.write(batch)) {
        s.once("drain", () => {
          writing = false;
          pump();
        });
        return;
      }
    }
    writing = false;
  };
  s.on("data", (c) => {
    // Count whole frames (all responses are the same 13 bytes, but chunks cut them anywhere).
    pending = pending.length ? Buffer.concat([pending, c]) : c;
    let i = 0;
    while (pending.length - i >= 5) {
      const len = pending.readUInt32BE(i + 1);
      if (pending.length - i < 5 + len) break;
      i += 5 + len;
      received++;
    }
    pending = pending.subarray(i);
    pump();
  });
  s.on("error", (e) => {
    if (!done) {
      console.error(e);
      process.exit(1);
    }
  });
  pump();
  await new Promise((r) => setTimeout(r, WARMUP * 1000));
  measureFrom = performance.now();
  countedAtStart = received;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const rate = (received - countedAtStart) / ((performance.now() - measureFrom) / 1000);
  done = true;
  s.close(http2.constants.NGHTTP2_CANCEL);
  session.destroy();
  console.log(JSON.stringify({ msgsPerSec: rate }));
  process.exit(0);
}

function runStreamClient(port, seconds) {
  const [cmd, argv] = pinned(CLIENT_CPU, process.execPath, [fileURLToPath(import.meta.url), "--stream-client", String(port), String(seconds)]);
  return new Promise((ok, fail) => {
    const p = spawn(cmd, argv, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.once("exit", (code) => (code === 0 ? ok(JSON.parse(out).msgsPerSec) : fail(new Error(`stream client: ${out}`))));
  });
}

async function measure(kind, bodyFile) {
  const unary = await withServer(kind, async (port, child) => {
    await checkGreet(port);
    await h2load(port, WARMUP, bodyFile);
    const stopRss = rssSampler(child.pid);
    const cpu0 = cpuSeconds(child.pid);
    const run = await h2load(port, DURATION, bodyFile);
    run.cpuUsPerReq = ((cpuSeconds(child.pid) - cpu0) * 1e6) / Math.max(1, run.rps * DURATION);
    const { peak, nativeAtPeak } = stopRss();
    return { ...run, rss: peak, native: nativeAtPeak };
  });
  // The stream runs on a fresh server, so its RSS is the stream's own and not what the unary run
  // left behind (RSS rarely shrinks).
  const stream =
    kind === "bare-http2"
      ? undefined
      : await withServer(kind, async (port, child) => {
          const stopRss = rssSampler(child.pid);
          const msgsPerSec = await runStreamClient(port, DURATION);
          return { msgsPerSec, rss: stopRss().peak };
        });
  return { kind, unary, stream };
}

async function withServer(kind, run) {
  const port = await freePort();
  const child = await startServer(kind, port);
  try {
    return await run(port, child);
  } finally {
    await stop(child);
  }
}

const fmt = (n, d = 0) => (n === undefined ? "-" : n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }));
const ratio = (a, b) => (a === undefined || b === undefined || b === 0 ? "-" : `${(a / b).toFixed(2)}x`);

async function main() {
  if (!existsSync(join(DIST, "samples/greet/server.js"))) {
    console.error(`${join(DIST, "samples/greet/server.js")} is missing: run \`npm run build\` first (or set DIST)`);
    process.exit(1);
  }
  if (spawnSync("h2load", ["--version"]).status !== 0) {
    console.error("h2load is missing: apt-get install -y nghttp2-client");
    process.exit(1);
  }
  const bodyFile = join(mkdtempSync(join(tmpdir(), "grpc-bench-")), "greet-request.bin");
  writeFileSync(bodyFile, FRAME);
  console.log(
    `gRPC benchmark: ${ROUNDS} rounds, ${DURATION}s per run after ${WARMUP}s warm-up; servers on CPU ${SERVER_CPU}, load on CPU ${CLIENT_CPU}` +
      (SERVER_FLAGS.length ? `; server flags: ${SERVER_FLAGS.join(" ")}` : ""),
  );
  // The servers take turns, round after round; each figure is the best round (interference from
  // the rest of the machine only ever lowers throughput), RSS the median round.
  const rounds = { "triple-rpc": [], "grpc-js": [], "bare-http2": [] };
  for (let i = 1; i <= ROUNDS; i++) {
    for (const kind of Object.keys(rounds)) {
      const r = await measure(kind, bodyFile);
      rounds[kind].push(r);
      console.log(
        `  round ${i} ${kind}: unary ${fmt(r.unary.rps)} req/s (${r.unary.failed} failed, ${fmt(r.unary.cpuUsPerReq, 1)} µs CPU/req, RSS ${fmt(r.unary.rss)} MiB, C heap ${fmt(r.unary.native)} MiB), stream ${fmt(r.stream?.msgsPerSec)} msg/s`,
      );
    }
  }
  const best = (xs) => Math.max(...xs);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  const results = {};
  for (const [kind, rs] of Object.entries(rounds)) {
    results[kind] = {
      unary: { rps: best(rs.map((r) => r.unary.rps)), cpu: median(rs.map((r) => r.unary.cpuUsPerReq)) },
      unaryRss: median(rs.map((r) => r.unary.rss)),
      unaryNative: rs.some((r) => r.unary.native === undefined) ? undefined : median(rs.map((r) => r.unary.native)),
      stream: rs[0].stream === undefined ? undefined : best(rs.map((r) => r.stream.msgsPerSec)),
      streamRss: rs[0].stream === undefined ? undefined : median(rs.map((r) => r.stream.rss)),
    };
  }
  const ours = results["triple-rpc"];
  const gjs = results["grpc-js"];
  const bare = results["bare-http2"];
  const rows = [
    ["", "triple-rpc", "grpc-js", "bare http2", "ours/grpc-js", "ours/bare", "target"],
    [
      "unary req/s (h2load -c16 -m32)",
      fmt(ours.unary.rps),
      fmt(gjs.unary.rps),
      fmt(bare.unary.rps),
      ratio(ours.unary.rps, gjs.unary.rps),
      ratio(ours.unary.rps, bare.unary.rps),
      ">= 1.7x grpc-js, >= 0.85x bare",
    ],
    [
      "unary server CPU µs/req (median)",
      fmt(ours.unary.cpu, 1),
      fmt(gjs.unary.cpu, 1),
      fmt(bare.unary.cpu, 1),
      ratio(gjs.unary.cpu, ours.unary.cpu),
      ratio(bare.unary.cpu, ours.unary.cpu),
      "(lower is better)",
    ],
    [
      "unary peak RSS MiB",
      fmt(ours.unaryRss, 1),
      fmt(gjs.unaryRss, 1),
      fmt(bare.unaryRss, 1),
      ratio(ours.unaryRss, gjs.unaryRss),
      ratio(ours.unaryRss, bare.unaryRss),
      "<= grpc-js",
    ],
    ["  of which C heap MiB (median)", fmt(ours.unaryNative, 1), fmt(gjs.unaryNative, 1), fmt(bare.unaryNative, 1), "-", "-", "(see bench/README.md)"],
    ["bidi stream msg/s (1 stream)", fmt(ours.stream), fmt(gjs.stream), "-", ratio(ours.stream, gjs.stream), "-", ">= 2x grpc-js"],
    ["stream peak RSS MiB", fmt(ours.streamRss, 1), fmt(gjs.streamRss, 1), "-", ratio(ours.streamRss, gjs.streamRss), "-", "<= grpc-js"],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  console.log();
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
}

const [mode, a, b] = process.argv.slice(2);
if (mode === "--serve" && a === "grpc-js") await serveGrpcJs(Number(b));
else if (mode === "--serve" && a === "bare-http2") serveBare(Number(b));
else if (mode === "--stream-client") await streamClient(Number(a), Number(b));
else await main();
