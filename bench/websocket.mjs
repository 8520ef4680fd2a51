// Triple over WebSocket vs gRPC: bidi messages/s on the same server (the greet sample's
// GreetStream), from Node.
//
//   node bench/websocket.mjs                  (after `npm run build`)
//   DURATION=10 ROUNDS=3 node bench/websocket.mjs
//
// One bidi call per run: gRPC over HTTP/2 (node:http2, length-prefixed protobuf frames written in
// batches) and Triple over WebSocket (the `ws` client, one binary WebSocket message per
// protobuf message, `content-type: application/proto` in the handshake), each keeping at most
// WINDOW messages unanswered. The server runs pinned to CPU 0 and the load client to CPU 1
// (taskset), a fresh server per run; the figure is responses/s after a warm-up, the median of
// ROUNDS, and the server's peak RSS. The script re-runs itself with `--client <kind> <port> <s>`.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import * as http2 from "node:http2";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, pinned, startServer, stop } from "./harness.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DIST = resolve(ROOT, process.env.DIST ?? "dist");
const DURATION = Number(process.env.DURATION ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 1);
const WINDOW = 4096;
const BATCH = 64;

// GreetRequest{name:"triple"} and GreetResponse{greeting:"triple"} encode to the same 8 bytes.
const MESSAGE = Buffer.from([0x0a, 0x06, ...Buffer.from("triple")]);
const FRAME = Buffer.concat([Buffer.from([0, 0, 0, 0, MESSAGE.length]), MESSAGE]);

/** Counts responses and reports the rate over `seconds` after the warm-up. */
function meter(seconds, done) {
  let received = 0;
  let from = 0;
  setTimeout(() => {
    from = received;
    const t = performance.now();
    setTimeout(() => done(((received - from) * 1000) / (performance.now() - t)), seconds * 1000);
  }, WARMUP * 1000);
  return {
    add: (n) => {
      received += n;
    },
    get received() {
      return received;
    },
  };
}

function grpcClient(port, seconds) {
  const batch = Buffer.concat(Array.from({ length: BATCH }, () => FRAME));
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const s = session.request({ ":method": "POST", ":path": "/greet.GreetService/GreetStream", "content-type": "application/grpc", te: "trailers" });
  let sent = 0;
  let writing = false;
  let done = false;
  let pending = Buffer.alloc(0);
  const m = meter(seconds, (rate) => {
    done = true;
    console.log(JSON.stringify({ rate }));
    process.exit(0);
  });
  const pump = () => {
    if (writing || done) return;
    writing = true;
    while (!done && sent - m.received < WINDOW) {
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
    pending = pending.length ? Buffer.concat([pending, c]) : c;
    let i = 0;
    let n = 0;
    while (pending.length - i >= 5) {
      const len = pending.readUInt32BE(i + 1);
      if (pending.length - i < 5 + len) break;
      i += 5 + len;
      n++;
    }
    pending = pending.subarray(i);
    m.add(n);
    pump();
  });
  pump();
}

async function websocketClient(port, seconds) {
  const { WebSocket } = await import("ws");
  const ws = new WebSocket(`ws://127.0.0.1:${port}/greet.GreetService/GreetStream`, { headers: { "content-type": "application/proto" } });
  await new Promise((ok, fail) => {
    ws.once("open", ok);
    ws.once("error", fail);
  });
  let sent = 0;
  let done = false;
  const m = meter(seconds, (rate) => {
    done = true;
    console.log(JSON.stringify({ rate }));
    process.exit(0);
  });
  const pump = () => {
    while (!done && sent - m.received < WINDOW) {
      // One write per batch, as the gRPC client writes its batch as one buffer.
      ws._socket.cork();
      for (let i = 0; i < BATCH; i++) ws.send(MESSAGE, { binary: true });
      ws._socket.uncork();
      sent += BATCH;
    }
  };
  ws.on("message", () => {
    m.add(1);
    if (sent - m.received < WINDOW - BATCH) pump();
  });
  ws.on("close", (code, reason) => {
    if (!done) console.error(`closed ${code} ${reason}`);
  });
  pump();
}

function peakRss(pid) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      peak = Math.max(peak, m ? Number(m[1]) / 1024 : 0);
    } catch {
      // gone
    }
  }, 100);
  return () => {
    clearInterval(timer);
    return Math.round(peak);
  };
}

async function run(kind) {
  const port = await freePort();
  const server = await startServer([join(DIST, "samples/greet/server.js")], { PORT: String(port), HOST: "127.0.0.1" }, "listening");
  const rss = peakRss(server.pid);
  const [cmd, argv] = pinned("1", process.execPath, [fileURLToPath(import.meta.url), "--client", kind, String(port), String(DURATION)]);
  const out = await new Promise((ok, fail) => {
    const p = spawn(cmd, argv, { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    p.stdout.on("data", (c) => (text += c));
    p.once("exit", (code) => (code === 0 ? ok(text) : fail(new Error(`${kind} client exited ${code}: ${text}`))));
  });
  const peak = rss();
  await stop(server);
  return { rate: JSON.parse(out.trim().split("\n").pop()).rate, rss: peak };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const results = {};
  for (const kind of ["grpc", "websocket"]) {
    const runs = [];
    for (let r = 0; r < ROUNDS; r++) runs.push(await run(kind));
    results[kind] = { rate: Math.round(median(runs.map((x) => x.rate))), rss: median(runs.map((x) => x.rss)), rounds: runs.map((x) => Math.round(x.rate)) };
    console.log(`${kind.padEnd(10)} ${results[kind].rate} messages/s (rounds ${results[kind].rounds.join(", ")}), server peak RSS ${results[kind].rss} MiB`);
  }
  console.log(`WebSocket / gRPC bidi: ${(results.websocket.rate / results.grpc.rate).toFixed(2)}×`);
}

if (process.argv[2] === "--client") {
  const [, , , kind, port, seconds] = process.argv;
  if (kind === "grpc") grpcClient(Number(port), Number(seconds));
  else await websocketClient(Number(port), Number(seconds));
} else {
  await main();
}
