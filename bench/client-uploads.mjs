// Uploads through the typed client: a StreamedFile parameter called with a Node.js Readable and
// with a File (Blob), over HTTP/1.1 and HTTP/2, against our server (bench/upload-servers.mjs
// "ours", its streamed `pipe` method writing the part to a file). Server on CPU 0, this client on
// CPU 1. DIST picks the client's build (absolute path), so two builds can be compared against
// the same server:
//
//   npm run build && node bench/client-uploads.mjs
//   SIZE_MB=128 ROUNDS=5 DIST=/abs/old/dist node bench/client-uploads.mjs
//
// Each figure is MB/s of file body, best of ROUNDS.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { freePort, startServer, stop } from "./harness.mjs";

if (!process.env.CLIENT_UPLOADS_PINNED && spawnSync("taskset", ["-V"]).status === 0) {
  const r = spawnSync("taskset", ["-c", "1", process.execPath, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, CLIENT_UPLOADS_PINNED: "1" },
  });
  process.exit(r.status ?? 1);
}

const here = dirname(fileURLToPath(import.meta.url));
const DIST = process.env.DIST ?? join(here, "..", "dist");
const SIZE = Number(process.env.SIZE_MB ?? 256) * 1024 * 1024;
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BLOCK = randomBytes(1024 * 1024);
const dir = mkdtempSync(join(process.env.DIR ?? tmpdir(), "triple-client-upload-bench-"));

const { closeClient, createClient, StreamedFile, Method, Param, Service } = await import(pathToFileURL(join(DIST, "src/index.js")).href);
class Files {
  pipe() {}
}
const P = Files.prototype;
Param({ name: "file", type: StreamedFile })(P, "pipe", 0);
Method()(P, "pipe", Object.getOwnPropertyDescriptor(P, "pipe"));
Service("bench.Files")(Files);

const blocks = () =>
  Readable.from(
    (function* () {
      for (let left = SIZE; left > 0; left -= BLOCK.length) yield BLOCK;
    })(),
  );
const file = new File(
  Array.from({ length: SIZE / BLOCK.length }, () => BLOCK),
  "big.bin",
);

const port = await freePort();
const server = await startServer([join(here, "upload-servers.mjs"), "ours", String(port), dir], {}, "ready");
try {
  console.log(`client ${DIST}, ${SIZE / 1024 / 1024} MiB, best of ${ROUNDS}`);
  for (const httpVersion of ["1.1", "2"]) {
    const c = createClient(Files, { providers: [`http://127.0.0.1:${port}`], httpVersion, retries: 0, timeoutMs: 600_000 });
    for (const [name, arg] of [
      ["Readable", blocks],
      ["File", () => file],
    ]) {
      let best = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const t0 = performance.now();
        const r = await c.pipe(arg());
        if (r.size !== SIZE) throw new Error(`size ${r.size}`);
        best = Math.max(best, SIZE / 1e6 / ((performance.now() - t0) / 1000));
      }
      console.log(`HTTP/${httpVersion} ${name.padEnd(8)} ${best.toFixed(0).padStart(6)} MB/s`);
    }
    await closeClient(c);
  }
} finally {
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
