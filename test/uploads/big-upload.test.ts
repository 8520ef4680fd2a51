// tier: slow (1 GiB uploads)
import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitForListening } from "../helpers/child.js";
import { post1 } from "../helpers/http.js";
import { MiB, sha256Of, type UploadSpec, upload1, upload2 } from "./upload-client.js";

const GiB = 1024 * MiB;
const SIZE = GiB;
const SERVER = join(__dirname, "big-server.js");

interface Stats {
  peak: number;
  rss: number;
  files: string[];
  spilled: number;
}

class BigChild {
  proc!: ChildProcess;
  url = "";
  stdout = "";
  constructor(readonly dir: string) {}

  async start(): Promise<void> {
    this.proc = spawn(process.execPath, ["--expose-gc", SERVER, this.dir], { stdio: ["ignore", "pipe", "pipe"] });
    const port = await waitForListening(this.proc, "big upload server");
    this.proc.stdout?.on("data", (c: Buffer) => {
      this.stdout += c.toString();
    });
    this.url = `http://127.0.0.1:${port}`;
  }

  async call<T>(method: string): Promise<T> {
    const r = await post1(this.url, `/test.Big/${method}`, { headers: { "content-type": "application/json" }, body: "[]" });
    assert.equal(r.status, 200, r.text());
    return r.json() as T;
  }

  stop(): void {
    this.proc?.kill("SIGKILL");
  }
}

/** Waits until the server's upload directory is empty (a deleted file's descriptor closes first). */
async function noFilesLeft(child: BigChild): Promise<void> {
  let s = await child.call<Stats>("stats");
  for (let i = 0; i < 100 && s.files.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
    s = await child.call<Stats>("stats");
  }
  assert.deepEqual(s.files, [], "temp files left after the call");
  assert.equal(s.spilled, 0);
}

/** Sends half of a 1 GiB upload, then stalls (the body stays open) and runs `then`. */
function halfThen(then: () => void): { onProgress: (n: number) => undefined } {
  let fired = false;
  return {
    onProgress: (n: number) => {
      if (!fired && n >= SIZE / 2) {
        fired = true;
        then();
      }
      return undefined;
    },
  };
}

const sends = [
  ["HTTP/1.1", upload1],
  ["HTTP/2", upload2],
] as const;

describe("1 GiB uploads: memory, temp files, interruptions", { timeout: 240_000 }, () => {
  let dir: string;
  let child: BigChild;
  let expected: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "triple-big-"));
    child = new BigChild(dir);
    await child.start();
    expected = sha256Of(SIZE);
  });
  after(() => {
    child.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [proto, send] of sends) {
    it(`${proto}: 1 GiB spilled to disk, SHA-256 checked by the handler; RSS grows < 64 MiB; temp file gone`, async () => {
      const base = await child.call<number>("reset");
      const spec: UploadSpec = { files: [{ name: "file", filename: "big.bin", size: SIZE }], fields: [{ name: "note", value: "n" }], filesFirst: true };
      const a = await send(child.url, "/test.Big/store", spec);
      assert.equal(a.status, 200, a.body);
      const r = JSON.parse(a.body) as { sha256: string; size: number; spilled: boolean };
      assert.deepEqual(r, { sha256: expected, size: SIZE, spilled: true, note: "n" });
      const s = await child.call<Stats>("stats");
      const grew = (s.peak - base) / MiB;
      assert.ok(grew < 64, `server RSS grew by ${grew.toFixed(1)} MiB`);
      await noFilesLeft(child);
    });

    it(`${proto}: 1 GiB streamed to a handler (last parameter); RSS grows < 64 MiB`, async () => {
      const base = await child.call<number>("reset");
      const a = await send(child.url, "/test.Big/live", { files: [{ name: "file", filename: "big.bin", size: SIZE }] });
      assert.equal(a.status, 200, a.body);
      assert.deepEqual(JSON.parse(a.body), { sha256: expected, size: SIZE, streaming: true });
      const s = await child.call<Stats>("stats");
      const grew = (s.peak - base) / MiB;
      assert.ok(grew < 64, `server RSS grew by ${grew.toFixed(1)} MiB`);
    });

    it(`${proto}: the client disconnects at 50 %: temp file gone, server serving`, async () => {
      const ac = new AbortController();
      const spec: UploadSpec = { files: [{ name: "file", size: SIZE }], fields: [{ name: "note", value: "n" }], filesFirst: true };
      const r = await send(child.url, "/test.Big/store", spec, { ...halfThen(() => ac.abort()), signal: ac.signal }).catch((e: Error) => e);
      assert.ok(r instanceof Error);
      await noFilesLeft(child);
    });

    it(`${proto}: the deadline passes at 50 % (the client stalls): 408, temp file gone`, async () => {
      const spec: UploadSpec = { files: [{ name: "file", size: SIZE }], fields: [{ name: "note", value: "n" }], filesFirst: true, stallAt: SIZE / 2 };
      const a = await send(child.url, "/test.Big/store", spec, { headers: { "tri-service-timeout": "1500" } });
      assert.equal(a.status, 408, a.body);
      assert.ok(a.sentAtAnswer <= SIZE / 2 + 2 * MiB);
      await noFilesLeft(child);
    });
  }

  for (const [proto, send] of sends) {
    it(`${proto}: the server shuts down at 50 % of an upload: the temp file is deleted`, async () => {
      // Its own server: this one ends with the test.
      const own = new BigChild(dir);
      await own.start();
      try {
        const spec: UploadSpec = { files: [{ name: "file", size: SIZE }], fields: [{ name: "note", value: "n" }], filesFirst: true, stallAt: SIZE / 2 };
        const upload = send(own.url, "/test.Big/store", spec).catch((e: Error) => e);
        // Wait until half is on the server's disk.
        for (;;) {
          const s = await own.call<Stats>("stats");
          if (s.spilled >= SIZE / 2 - 4 * MiB) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        await own.call<string>("shutdown");
        const r = await upload;
        if (!(r instanceof Error)) assert.equal(r.status, 503, r.body);
        for (let i = 0; i < 100 && !/CLOSED \d+/.test(own.stdout); i++) await new Promise((r) => setTimeout(r, 50));
        assert.match(own.stdout, /CLOSED 0\b/);
        assert.deepEqual(readdirSync(dir), []);
      } finally {
        own.stop();
      }
    });
  }
});
