// tier: slow (256 MiB transfers)
import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient, createServer, Download, StreamedFile, RpcError, type TripleServer } from "../../src/index.js";
import { codeName } from "../../src/protocol/code.js";
import { selfSigned } from "../helpers/tls.js";
import { DownloadService, hashStream, type Seen, UploadService } from "./services.js";
import { MiB } from "./upload-client.js";

/**
 * Inside a describe: a cleartext server of the upload and download services (its own upload
 * directory, `maxUploadFileBytes` as given) for its tests, and the clients they made, closed after.
 */
function servedFiles(maxUploadFileBytes: number): { readonly server: TripleServer; readonly clients: object[]; readonly dir: string } {
  const served = { server: undefined as unknown as TripleServer, clients: [] as object[], dir: "" };
  before(async () => {
    served.dir = mkdtempSync(join(tmpdir(), "triple-client-files-"));
    served.server = createServer({ services: [new UploadService(), new DownloadService()], uploads: { dir: served.dir, maxFileBytes: maxUploadFileBytes } });
    await served.server.listen({ port: 0 });
  });
  after(async () => {
    for (const c of served.clients) await closeClient(c);
    await served.server.close();
    rmSync(served.dir, { recursive: true, force: true });
  });
  return served;
}

describe("typed client: uploads (File, Blob, Readable → multipart) and downloads (→ Download) over Triple HTTP", () => {
  const served = servedFiles(1024 * MiB);
  const clients = served.clients;

  for (const httpVersion of ["1.1", "2"] as const) {
    it(`HTTP/${httpVersion}: File, Blob and Readable arguments arrive as StreamedFile parameters`, async () => {
      const up = createClient(UploadService, { providers: [served.server.url], httpVersion, retries: 0 });
      clients.push(up);
      const big = Buffer.alloc(3 * MiB, 5);
      const file = new File([big], "photo.jpg", { type: "image/jpeg" });
      const a = (await up.stored(file as unknown as StreamedFile, "note")) as Seen & { note: string };
      assert.equal(a.filename, "photo.jpg");
      assert.equal(a.contentType, "image/jpeg");
      assert.equal(a.size, big.length);
      assert.equal(a.note, "note");
      const b = (await up.live("label", new Blob(["hello"]) as unknown as StreamedFile)) as Seen & { label: string };
      assert.equal(b.size, 5);
      assert.equal(b.label, "label");
      const c = (await up.live("r", Readable.from([Buffer.from("abc"), Buffer.from("def")]) as unknown as StreamedFile)) as Seen;
      assert.equal(c.size, 6);
    });

    it(`HTTP/${httpVersion}: a method returning a file gives the client a Download`, async () => {
      const path = join(served.dir, "report.bin");
      const content = Buffer.alloc(2 * MiB + 3, 1);
      writeFileSync(path, content);
      const down = createClient(DownloadService, { providers: [served.server.url], httpVersion, retries: 0 });
      clients.push(down);
      const d = (await down.file(path)) as unknown as Download;
      assert.ok(d instanceof Download);
      assert.equal(d.filename, "report.bin");
      assert.equal(d.type, "application/x-test");
      assert.equal(d.size, content.length);
      const { size } = await hashStream(d.stream());
      assert.equal(size, content.length);
      const n = (await down.named("résumé.txt")) as unknown as Download;
      assert.equal(n.filename, "résumé.txt");
      // Round trip: upload a File, get it back as a Download.
      const e = (await down.echo(new File(["round trip"], "rt.txt", { type: "text/plain" }) as unknown as StreamedFile)) as unknown as Download;
      assert.equal(e.filename, "rt.txt");
      assert.equal(Buffer.concat((await e.stream().toArray()) as Buffer[]).toString(), "round trip");
    });

    it(`HTTP/${httpVersion}: 512 MiB each way streams through the client (its RSS grows < 64 MiB)`, async () => {
      const SIZE = 512 * MiB;
      const block = Buffer.alloc(MiB, 3);
      const up = createClient(UploadService, { providers: [served.server.url], httpVersion, retries: 0, timeoutMs: 120_000 });
      const down = createClient(DownloadService, { providers: [served.server.url], httpVersion, retries: 0, timeoutMs: 120_000 });
      clients.push(up, down);
      const grew = await rssGrowth(async () => {
        const seen = (await up.live("big", blocks(SIZE, block) as unknown as StreamedFile)) as Seen;
        assert.equal(seen.size, SIZE);
        const d = (await down.readable(SIZE)) as unknown as Download;
        assert.ok(d instanceof Download);
        const { size } = await hashStream(d.stream());
        assert.equal(size, SIZE);
      });
      assert.ok(grew < 64, `client RSS grew by ${grew.toFixed(1)} MiB`);
    });
  }
});

describe("typed client: uploads and downloads over HTTPS/1.1 stream too (a TLS connection of their own)", () => {
  let server: TripleServer;
  let dir: string;
  let url: string;
  let ca: Buffer;
  const clients: object[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "triple-client-files-tls-"));
    const { key, cert } = selfSigned();
    ca = cert;
    server = createServer({ services: [new UploadService(), new DownloadService()], uploads: { dir, maxFileBytes: 1024 * MiB }, tls: { key, cert } });
    const { port } = await server.listen({ port: 0, host: "127.0.0.1" });
    url = `https://127.0.0.1:${port}`;
  });
  after(async () => {
    for (const c of clients) await closeClient(c);
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a download larger than maxResponseBytes arrives as a Download (it is not read into memory)", async () => {
    const down = createClient(DownloadService, { providers: [url], httpVersion: "1.1", tls: { ca }, retries: 0, maxResponseBytes: MiB });
    clients.push(down);
    const d = (await down.readable(8 * MiB)) as unknown as Download;
    assert.ok(d instanceof Download);
    assert.equal((await hashStream(d.stream())).size, 8 * MiB);
  });

  it("a 256 MiB upload streams out (the client's RSS grows < 64 MiB)", async () => {
    const SIZE = 256 * MiB;
    const block = Buffer.alloc(MiB, 7);
    const up = createClient(UploadService, { providers: [url], httpVersion: "1.1", tls: { ca }, retries: 0, timeoutMs: 120_000 });
    clients.push(up);
    const grew = await rssGrowth(async () => {
      const seen = (await up.live("big", blocks(SIZE, block) as unknown as StreamedFile)) as Seen;
      assert.equal(seen.size, SIZE);
    });
    assert.ok(grew < 64, `client RSS grew by ${grew.toFixed(1)} MiB`);
  });
});

describe("typed client: an upload the server refuses early (past maxUploadFileBytes) gets the server's answer", () => {
  const served = servedFiles(MiB);
  const clients = served.clients;

  for (const httpVersion of ["1.1", "2"] as const) {
    it(`HTTP/${httpVersion}: 413 resource_exhausted with the server's message, promptly, and the client keeps working`, async () => {
      const up = createClient(UploadService, { providers: [served.server.url], httpVersion, retries: 0, timeoutMs: 30_000 });
      clients.push(up);
      let read = 0;
      for (const make of [
        () => new File([Buffer.alloc(16 * MiB, 1)], "big.bin") as unknown as StreamedFile,
        () => blocks(64 * MiB, Buffer.alloc(MiB, 2), () => read++) as unknown as StreamedFile,
      ]) {
        const start = Date.now();
        await assert.rejects(up.live("big", make()), (e: unknown) => {
          assert.ok(e instanceof RpcError, String(e));
          assert.equal(codeName(e.code), "resource_exhausted", String(e));
          assert.match(e.message, /is larger than 1048576 bytes \(uploads\.maxFileBytes\)/, e.message);
          return true;
        });
        // Promptly: well before the call's 30 s timeout (one-sided, generous), and for the stream
        // a count: it stopped being read long before its 64 blocks of 1 MiB.
        assert.ok(Date.now() - start < 15_000, `took ${Date.now() - start} ms`);
        assert.ok(read < 32, `${read} blocks of 1 MiB read after a refusal at 1 MiB`);
        const ok = (await up.live("small", new Blob(["hello"]) as unknown as StreamedFile)) as Seen;
        assert.equal(ok.size, 5);
      }
    });

    it(`HTTP/${httpVersion}: a handler that never answers ends the upload at its deadline; a source that fails ends it with the source's error; the source is destroyed`, async () => {
      const up = createClient(UploadService, { providers: [served.server.url], httpVersion, retries: 0, timeoutMs: 1000 });
      clients.push(up);
      const slow = new Readable({ read() {} });
      slow.push(Buffer.alloc(1024, 1));
      const start = Date.now();
      await assert.rejects(up.hold(slow as unknown as StreamedFile, 1), (e: unknown) => e instanceof RpcError && codeName(e.code) === "deadline_exceeded");
      const took = Date.now() - start;
      // Not before the 1 s deadline; the handler never answers, so any end came from the deadline:
      // the upper bound is generous (a loaded machine only delays it), under the runner's timeout.
      assert.ok(took >= 900 && took < 10_000, `took ${took} ms`);
      for (const until = Date.now() + 2000; !slow.destroyed && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      assert.ok(slow.destroyed, "the source is destroyed");
      let sent = 0;
      const failing = new Readable({
        read() {
          if (++sent === 3) this.destroy(new Error("disk on fire"));
          else this.push(Buffer.alloc(64 * 1024, 3));
        },
      });
      await assert.rejects(up.live("broken", failing as unknown as StreamedFile), (e: unknown) => e instanceof RpcError && /disk on fire/.test(e.message));
      const ok = (await up.live("small", new Blob(["hello"]) as unknown as StreamedFile)) as Seen;
      assert.equal(ok.size, 5);
    });
  }
});

/** A stream of `size` bytes made of `block` repeated. */
function blocks(size: number, block: Buffer, onRead: () => void = () => {}): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < size / block.length; i++) {
        onRead();
        yield block;
      }
    })(),
  );
}

/** How much this process's RSS peaked above its start (MiB, sampled every 10 ms) while `run` ran. */
async function rssGrowth(run: () => Promise<void>): Promise<number> {
  global.gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
  return (peak - base) / MiB;
}
