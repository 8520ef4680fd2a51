// Uploads and downloads at real sizes (issue 27): triple-rpc against bare Node servers doing the
// same work, side by side in one run. Servers on CPU 0, this load generator on CPU 1 (taskset).
//
//   npm run build && node bench/uploads.mjs                 # 1 GiB, 3 rounds, best of each
//   SIZE_MB=256 ROUNDS=1 node bench/uploads.mjs             # a quick sanity run
//   DIR=/some/disk node bench/uploads.mjs                   # where both write (default: os.tmpdir())
//
// Rows: upload of SIZE_MB in one multipart file part (generated on the fly from a repeated
// random block) over HTTP/1.1 and HTTP/2 to
//   - bare: node:http / node:http2 + @fastify/busboy piping the part to fs.createWriteStream;
//   - ours store: a StreamedFile parameter spilled by the framework to its temp file;
//   - ours pipe: a streamed last-parameter StreamedFile the handler pipes to fs.createWriteStream;
// and the download of a SIZE_MB file: bare fs.createReadStream(...).pipe(res) against a method
// returning Download.file(...). Each figure is MB/s of the request (or response) body; the
// ratio column is ours / bare (issue 27's target: at least 0.8).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startServer, stop } from "./harness.mjs";

// Pin this process (the load generator) to CPU 1 by re-executing under taskset once.
if (!process.env.UPLOADS_BENCH_PINNED && spawnSync("taskset", ["-V"]).status === 0) {
  const r = spawnSync("taskset", ["-c", "1", process.execPath, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, UPLOADS_BENCH_PINNED: "1" },
  });
  process.exit(r.status ?? 1);
}

const here = dirname(fileURLToPath(import.meta.url));
const SIZE = Number(process.env.SIZE_MB ?? 1024) * 1024 * 1024;
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const dir = mkdtempSync(join(process.env.DIR ?? tmpdir(), "triple-upload-bench-"));
const BLOCK = randomBytes(1024 * 1024);
const BOUNDARY = "----benchBoundary7MA4YWxk";
const HEAD = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
const TAIL = Buffer.from(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nbench\r\n--${BOUNDARY}--\r\n`);

/** Writes the multipart body of a SIZE-byte file to `w` with backpressure; resolves when all is written. */
async function writeBody(w) {
  const write = (c) => (w.write(c) ? undefined : new Promise((r) => w.once("drain", r)));
  await write(HEAD);
  for (let left = SIZE; left > 0; left -= BLOCK.length) {
    const p = write(left >= BLOCK.length ? BLOCK : BLOCK.subarray(0, left));
    if (p) await p;
  }
  w.end(TAIL);
}

function upload1(port, path) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(
      { host: "127.0.0.1", port, path, method: "POST", agent: false, headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } },
      (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`${res.statusCode} ${body}`))));
      },
    );
    req.on("error", reject);
    writeBody(req).catch(reject);
  });
}

function upload2(port, path) {
  return new Promise((resolve, reject) => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on("error", reject);
    const t0 = process.hrtime.bigint();
    const req = s.request({ ":method": "POST", ":path": path, "content-type": `multipart/form-data; boundary=${BOUNDARY}` });
    let status = 0;
    let body = "";
    req.on("response", (h) => (status = h[":status"]));
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      s.close();
      status === 200 ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`${status} ${body}`));
    });
    req.on("error", reject);
    writeBody(req).catch(reject);
  });
}

function download1(port, path) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request({ host: "127.0.0.1", port, path, method: "POST", agent: false, headers: { "content-type": "application/json" } }, (res) => {
      let n = 0;
      res.on("data", (c) => (n += c.length));
      res.on("end", () => (n === SIZE ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`got ${n} bytes (${res.statusCode})`))));
    });
    req.on("error", reject);
    req.end("[]");
  });
}

function download2(port, path) {
  return new Promise((resolve, reject) => {
    const s = http2.connect(`http://127.0.0.1:${port}`);
    s.on("error", reject);
    const t0 = process.hrtime.bigint();
    const req = s.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
    let n = 0;
    req.on("data", (c) => (n += c.length));
    req.on("end", () => {
      s.close();
      n === SIZE ? resolve(Number(process.hrtime.bigint() - t0) / 1e9) : reject(new Error(`got ${n} bytes`));
    });
    req.on("error", reject);
    req.end("[]");
  });
}

/** Best MiB/s of each of `fns`, run in turns round by round (so machine noise hits them alike). */
async function bestOf(...fns) {
  const t = fns.map(() => Number.POSITIVE_INFINITY);
  for (let i = 0; i < ROUNDS; i++) for (let j = 0; j < fns.length; j++) t[j] = Math.min(t[j], await fns[j]());
  return t.map((x) => SIZE / 1024 / 1024 / x);
}

// The file both servers send.
const fd = openSync(join(dir, "download.bin"), "w");
for (let left = SIZE; left > 0; left -= BLOCK.length) writeSync(fd, left >= BLOCK.length ? BLOCK : BLOCK.subarray(0, left));
closeSync(fd);

const oursPort = await freePort();
const barePort = await freePort();
const ours = await startServer([join(here, "upload-servers.mjs"), "ours", String(oursPort), dir], {}, "ready");
const bare = await startServer([join(here, "upload-servers.mjs"), "bare", String(barePort), dir], {}, "ready");
const rows = [];
try {
  for (const [proto, up, down, bareUpPort] of [
    ["HTTP/1.1", upload1, download1, barePort],
    ["HTTP/2", upload2, download2, barePort + 1],
  ]) {
    // In turns, round by round, against servers started together.
    const [bareUp, store, pipe] = await bestOf(
      () => up(bareUpPort, "/upload"),
      () => up(oursPort, "/bench.Files/store"),
      () => up(oursPort, "/bench.Files/pipe"),
    );
    const [bareDown, oursDown] = await bestOf(
      () => down(bareUpPort, "/download"),
      () => down(oursPort, "/bench.Files/download"),
    );
    rows.push([`${proto} upload, spilled by the framework`, store, bareUp]);
    rows.push([`${proto} upload, streamed to the handler`, pipe, bareUp]);
    rows.push([`${proto} download (Download.file)`, oursDown, bareDown]);
  }
} finally {
  await stop(ours);
  await stop(bare);
  rmSync(dir, { recursive: true, force: true });
}
console.log(`\n${SIZE / 1024 / 1024} MiB, best of ${ROUNDS} (MB/s = MiB of body per second)\n`);
console.log("| row | triple-rpc MB/s | bare MB/s | ratio |\n|---|---:|---:|---:|");
for (const [name, ours, bare] of rows) console.log(`| ${name} | ${ours.toFixed(0)} | ${bare.toFixed(0)} | ${(ours / bare).toFixed(2)} |`);
