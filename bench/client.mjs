#!/usr/bin/env node
// Client benchmark: calls/s of each client against bare node servers, one client at a time.
//
//   npm run build && node bench/client.mjs        # DURATION=5 WARMUP=1 ROUNDS=3 INFLIGHT=64 ONLY=h1,bare
//
// The server process (pinned to SERVER_CPU, 0) answers GreetService/Greet as cheaply as node
// allows: gRPC (framed bytes and `grpc-status: 0` trailers), Triple/Connect JSON and binary, on an
// h2c port and an HTTP/1.1 port. Each client runs in its own process pinned to CLIENT_CPU (1) and
// keeps INFLIGHT calls in flight for DURATION seconds after a WARMUP; ROUNDS rounds alternate the
// clients and the median round is reported. The bare node:http2 / node:http clients are the
// floor: what any client on node pays at least (for gRPC, a bare node:http2 client sending the
// framed request and reading the trailers, since the server's cost differs from JSON's). Targets: each of our transports >= 0.85 x the
// bare client of its HTTP version, and >= 1.5 x grpc-js on gRPC.
import { spawn } from "node:child_process";
import * as http from "node:http";
import * as http2 from "node:http2";
import { dirname, join, resolve } from "node:path";
import { freePort, pinned } from "./harness.mjs";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..");
const DIST = resolve(ROOT, process.env.DIST ?? "dist");
const DURATION = Number(process.env.DURATION ?? 5);
const WARMUP = Number(process.env.WARMUP ?? 1);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const INFLIGHT = Number(process.env.INFLIGHT ?? 64);
const SERVER_CPU = process.env.SERVER_CPU ?? "0";
const CLIENT_CPU = process.env.CLIENT_CPU ?? "1";
const GREET_PROTO = join(ROOT, "samples/greet/greet.proto");

// GreetRequest{name:"triple"} and GreetResponse{greeting:"triple"} encode to the same 8 bytes.
const MESSAGE = Buffer.from([0x0a, 0x06, ...Buffer.from("triple")]);
const FRAME = Buffer.concat([Buffer.from([0, 0, 0, 0, MESSAGE.length]), MESSAGE]);
const JSON_REPLY = Buffer.from('{"greeting":"triple"}');

// ---------------------------------------------------------------------------------------------
// The bare server (`node bench/client.mjs --serve <h2port> <h1port>`).

function answerH2(stream, headers) {
  const ct = String(headers["content-type"] ?? "");
  stream.on("data", () => {});
  stream.on("end", () => {
    if (ct.startsWith("application/grpc")) {
      stream.respond({ ":status": 200, "content-type": ct }, { waitForTrailers: true });
      stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(FRAME);
    } else if (ct.includes("proto")) {
      stream.respond({ ":status": 200, "content-type": ct, "content-length": MESSAGE.length });
      stream.end(MESSAGE);
    } else {
      stream.respond({ ":status": 200, "content-type": "application/json", "content-length": JSON_REPLY.length });
      stream.end(JSON_REPLY);
    }
  });
}

function serve(h2port, h1port) {
  const h2 = http2.createServer();
  h2.on("stream", answerH2);
  h2.listen(h2port, "127.0.0.1");
  http
    .createServer((req, res) => {
      req.on("data", () => {});
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-length": JSON_REPLY.length });
        res.end(JSON_REPLY);
      });
    })
    .listen(h1port, "127.0.0.1", () => console.log("ready"));
}

// ---------------------------------------------------------------------------------------------
// The clients (`node bench/client.mjs --client <name> <h2url> <h1url>`): each returns a call().

async function greetDescService() {
  const protobuf = (await import("protobufjs")).default;
  await import("protobufjs/ext/descriptor/index.js");
  const { createFileRegistry, fromBinary } = await import("@bufbuild/protobuf");
  const { FileDescriptorSetSchema } = await import("@bufbuild/protobuf/wkt");
  const root = protobuf.loadSync(GREET_PROTO);
  const set = root.toDescriptor("proto3");
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, set.constructor.encode(set).finish())).getService("greet.GreetService");
}

const CLIENTS = {
  async ours(h2url, h1url, options) {
    const { createClient } = await import(pathToFileURL(join(DIST, "src/index.js")).href);
    const { GreetServiceImpl } = await import(pathToFileURL(join(DIST, "samples/greet/greet-service.js")).href);
    const c = createClient(GreetServiceImpl, { providers: options.httpVersion === "1.1" ? h1url : h2url, ...options });
    return () => c.greet({ name: "triple" });
  },
  "triple-rpc gRPC": (a, b) => CLIENTS.ours(a, b, { protocol: "grpc" }),
  "triple-rpc Triple JSON h2": (a, b) => CLIENTS.ours(a, b, { httpVersion: "2" }),
  "triple-rpc Triple JSON h1": (a, b) => CLIENTS.ours(a, b, { httpVersion: "1.1" }),
  "triple-rpc Connect h2": (a, b) => CLIENTS.ours(a, b, { protocol: "connect", contentType: "proto" }),
  async "grpc-js"(h2url) {
    const grpc = await import("@grpc/grpc-js");
    const loader = await import("@grpc/proto-loader");
    const pkg = grpc.loadPackageDefinition(loader.loadSync(GREET_PROTO, { keepCase: true }));
    const c = new pkg.greet.GreetService(new URL(h2url).host, grpc.credentials.createInsecure());
    return () => new Promise((ok, fail) => c.Greet({ name: "triple" }, (e, r) => (e ? fail(e) : ok(r))));
  },
  async "connect-node gRPC"(h2url) {
    const { createClient } = await import("@connectrpc/connect");
    const { createGrpcTransport } = await import("@connectrpc/connect-node");
    const c = createClient(await greetDescService(), createGrpcTransport({ baseUrl: h2url }));
    return () => c.greet({ name: "triple" });
  },
  async "connect-node Connect h2"(h2url) {
    const { createClient } = await import("@connectrpc/connect");
    const { createConnectTransport } = await import("@connectrpc/connect-node");
    const c = createClient(await greetDescService(), createConnectTransport({ baseUrl: h2url, httpVersion: "2", useBinaryFormat: true }));
    return () => c.greet({ name: "triple" });
  },
  async "bare node:http2"(h2url) {
    const session = http2.connect(h2url);
    const body = Buffer.from('{"name":"triple"}');
    const headers = { ":method": "POST", ":path": "/greet.GreetService/Greet", "content-type": "application/json" };
    return () =>
      new Promise((ok, fail) => {
        const s = session.request(headers);
        s.on("data", () => {});
        s.on("end", ok);
        s.on("error", fail);
        s.end(body);
      });
  },
  async "bare node:http2 gRPC"(h2url) {
    const session = http2.connect(h2url);
    const headers = {
      ":method": "POST",
      ":path": "/greet.GreetService/Greet",
      "content-type": "application/grpc",
      te: "trailers",
    };
    return () =>
      new Promise((ok, fail) => {
        const s = session.request(headers);
        let status;
        s.on("data", () => {});
        s.on("trailers", (t) => (status = t["grpc-status"]));
        s.on("close", () => (status === "0" ? ok() : fail(new Error(`grpc-status ${status}`))));
        s.on("error", fail);
        s.end(FRAME);
      });
  },
  async "bare node:http"(_h2url, h1url) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: INFLIGHT });
    const u = new URL(h1url);
    const body = Buffer.from('{"name":"triple"}');
    const options = {
      host: u.hostname,
      port: u.port,
      path: "/greet.GreetService/Greet",
      method: "POST",
      agent,
      headers: { "content-type": "application/json", "content-length": body.length },
    };
    return () =>
      new Promise((ok, fail) => {
        const req = http.request(options, (res) => {
          res.on("data", () => {});
          res.on("end", ok);
        });
        req.on("error", fail);
        req.end(body);
      });
  },
};

/** Keeps INFLIGHT calls going for `seconds`; resolves with completed calls. */
async function load(call, seconds) {
  let done = 0;
  let failed = 0;
  let stopAt = Date.now() + seconds * 1000;
  const loop = async () => {
    while (Date.now() < stopAt) {
      try {
        await call();
        done++;
      } catch (e) {
        failed++;
        if (failed === 1) console.error(String(e?.message ?? e));
      }
    }
  };
  await Promise.all(Array.from({ length: INFLIGHT }, loop));
  stopAt = 0;
  return { done, failed };
}

async function runClient(name, h2url, h1url) {
  const call = await CLIENTS[name](h2url, h1url);
  await call(); // connect
  await load(call, WARMUP);
  const r = await load(call, DURATION);
  console.log(JSON.stringify({ rate: r.done / DURATION, failed: r.failed }));
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Harness.

function run(cpu, args, onLine) {
  const [cmd, argv] = pinned(cpu, process.execPath, args);
  const child = spawn(cmd, argv, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  child.stdout.on("data", (d) => onLine?.(d.toString()));
  return child;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const [h2port, h1port] = [await freePort(), await freePort()];
  const server = run(SERVER_CPU, [fileURLToPath(import.meta.url), "--serve", String(h2port), String(h1port)]);
  await new Promise((ok) => server.stdout.on("data", (d) => /ready/.test(d.toString()) && ok()));
  const h2url = `http://127.0.0.1:${h2port}`;
  const h1url = `http://127.0.0.1:${h1port}`;
  // ONLY=a,b runs the clients whose names contain one of the substrings (ratios of absent rows print n/a).
  const only = process.env.ONLY?.split(",");
  const names = Object.keys(CLIENTS).filter((n) => n !== "ours" && (!only || only.some((o) => n.includes(o))));
  const rates = Object.fromEntries(names.map((n) => [n, []]));
  console.log(
    `client benchmark: ${ROUNDS} rounds, ${DURATION}s each after ${WARMUP}s, ${INFLIGHT} calls in flight; server CPU ${SERVER_CPU}, client CPU ${CLIENT_CPU}`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of names) {
      let out = "";
      const child = run(CLIENT_CPU, [fileURLToPath(import.meta.url), "--client", name, h2url, h1url], (l) => (out += l));
      await new Promise((ok) => child.once("exit", ok));
      const r = JSON.parse(out.trim().split("\n").pop());
      rates[name].push(r.rate);
      console.log(
        `  round ${round} ${name.padEnd(28)} ${Math.round(r.rate).toLocaleString("en-US").padStart(8)} calls/s${r.failed ? ` (${r.failed} failed)` : ""}`,
      );
    }
  }
  server.kill("SIGKILL");
  const m = Object.fromEntries(names.map((n) => [n, median(rates[n])]));
  const ratio = (a, b) => (m[a] && m[b] ? `${(m[a] / m[b]).toFixed(2)}x` : "n/a");
  console.log("\nmedian calls/s:");
  for (const n of names) console.log(`  ${n.padEnd(28)} ${Math.round(m[n]).toLocaleString("en-US").padStart(8)}`);
  console.log("\nratios (targets: >= 0.85x the bare client of the HTTP version; gRPC >= 1.5x grpc-js):");
  console.log(`  triple-rpc gRPC / bare node:http2 gRPC       ${ratio("triple-rpc gRPC", "bare node:http2 gRPC")}`);
  console.log(`  triple-rpc gRPC / grpc-js                    ${ratio("triple-rpc gRPC", "grpc-js")}`);
  console.log(`  triple-rpc Triple JSON h2 / bare node:http2  ${ratio("triple-rpc Triple JSON h2", "bare node:http2")}`);
  console.log(`  triple-rpc Triple JSON h1 / bare node:http   ${ratio("triple-rpc Triple JSON h1", "bare node:http")}`);
  console.log(`  triple-rpc Connect h2 / connect-node Connect ${ratio("triple-rpc Connect h2", "connect-node Connect h2")}`);
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "--serve") serve(Number(rest[0]), Number(rest[1]));
else if (mode === "--client") await runClient(rest[0], rest[1], rest[2]);
else await main();
