// Issue 22 break 3, measured: a flood of HTTP/2 connections that each send the preface and a
// malformed PING (→ GOAWAY FRAME_SIZE_ERROR), then close. Reports the server's fds and RSS (read
// from /proc of the server, a child process) before, right after the flood and 3 s later, and
// how many connections a well-behaved client could still open.
//
//   node bench/hostile-goaway-flood.mjs [--n 5000] [--concurrency 200] [--dist dist] [--tls]
//
// Bounded: N connections, at most `concurrency` at once; the server is killed at the end.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import * as tls from "node:tls";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : process.argv[i + 1];
};
const N = Number(arg("n", 5000));
const CONCURRENCY = Number(arg("concurrency", 200));
const DIST = path.resolve(arg("dist", "dist"));
const TLS = process.argv.includes("--tls");

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
const frame = (type, flags, payload = Buffer.alloc(0)) => {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  return Buffer.concat([h, payload]);
};
const ATTACK = Buffer.concat([PREFACE, frame(4, 0), frame(4, 1), frame(6, 0, Buffer.alloc(4))]);

const SERVER = `
const { createServer } = require(${JSON.stringify(path.join(DIST, "src/index.js"))});
const fs = require("fs");
const tlsOpts = process.env.TLS_KEY ? { tls: { key: fs.readFileSync(process.env.TLS_KEY), cert: fs.readFileSync(process.env.TLS_CERT) } } : {};
createServer({ services: [], logger: { info() {}, warn() {}, error() {} }, ...tlsOpts })
  .listen({ port: 0 }).then((a) => console.log("LISTENING " + a.port));
`;

function selfSigned() {
  const dir = fs.mkdtempSync("/tmp/flood-tls-");
  const { execFileSync } = require_("node:child_process");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      `${dir}/k.pem`,
      "-out",
      `${dir}/c.pem`,
      "-days",
      "1",
      "-subj",
      "/CN=127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  return { TLS_KEY: `${dir}/k.pem`, TLS_CERT: `${dir}/c.pem` };
}
import { createRequire } from "node:module";
const require_ = createRequire(import.meta.url);

function startServer() {
  const env = { ...process.env, ...(TLS ? selfSigned() : {}) };
  const proc = spawn(process.execPath, ["-e", SERVER], { env, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve) => {
    proc.stdout.on("data", (c) => {
      const m = /LISTENING (\d+)/.exec(c.toString());
      if (m) resolve({ proc, port: Number(m[1]) });
    });
  });
}

function sample(pid) {
  const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
  const rss = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1];
  return { fds, rssMb: Math.round(Number(rss) / 1024) };
}

function connect(port) {
  return TLS ? tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, ALPNProtocols: ["h2"] }) : net.connect(port, "127.0.0.1");
}

/** One attack connection: send, wait for the GOAWAY (or 200 ms), close our side. */
function attackOnce(port) {
  return new Promise((resolve) => {
    const s = connect(port);
    let settled = false;
    const done = (ok) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 2000);
    s.once(TLS ? "secureConnect" : "connect", () => s.write(ATTACK));
    let seen = Buffer.alloc(0);
    let goaway = false;
    s.on("data", (c) => {
      seen = Buffer.concat([seen, c]);
      if (!goaway && seen.includes(Buffer.from([0x07, 0x00, 0x00, 0x00, 0x00, 0x00]))) {
        goaway = true;
        setTimeout(() => done(true), 20);
      }
    });
    s.on("error", () => done(goaway));
    s.on("close", () => done(goaway)); // without a GOAWAY: refused at accept (a connection cap)
  });
}

async function flood(port) {
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < N) {
      next++;
      if (!(await attackOnce(port))) failed++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return failed;
}

function goodConnect(port) {
  return new Promise((resolve) => {
    const s = connect(port);
    const t = setTimeout(() => {
      s.destroy();
      resolve(false);
    }, 2000);
    s.once(TLS ? "secureConnect" : "connect", () => {
      clearTimeout(t);
      s.destroy();
      resolve(true);
    });
    s.on("error", () => {
      clearTimeout(t);
      resolve(false);
    });
  });
}

const { proc, port } = await startServer();
await new Promise((r) => setTimeout(r, 300));
const before = sample(proc.pid);
const t0 = Date.now();
const failed = await flood(port);
const floodMs = Date.now() - t0;
const rightAfter = sample(proc.pid);
await new Promise((r) => setTimeout(r, 3000));
const later = sample(proc.pid);
const good = await goodConnect(port);
proc.kill("SIGKILL");
console.log(
  JSON.stringify({
    dist: DIST,
    tls: TLS,
    connections: N,
    concurrency: CONCURRENCY,
    floodMs,
    attackConnectionsWithoutGoaway: failed,
    before,
    rightAfter,
    after3s: later,
    goodClientConnects: good,
  }),
);
