import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient, createServer, type StreamedFile, type TripleServer } from "../../src/index.js";
import { DownloadService, UploadService } from "../uploads/services.js";

/**
 * A call with file arguments or a Download reply, against a server that sends the headers of a
 * non-file reply and then stalls or drops its body. Before the fix, over HTTP/1.1 the call hung
 * past its timeout (the deadline no longer reached the response) and forever when the connection
 * closed mid-body, keeping the socket; over HTTP/2 the deadline gave `internal` (a truncated body
 * parsed) instead of `deadline_exceeded`.
 */
describe("hostile: client file calls whose reply body stalls or is cut", () => {
  let mode: "stall" | "cut" = "stall";
  const h1 = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"a":');
    if (mode === "cut") setTimeout(() => req.socket.destroy(), 30);
  });
  const h2 = http2.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"a":');
  });
  const sockets = new Set<Socket>();
  h1.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  let url1 = "";
  let url2 = "";
  const clients: object[] = [];

  before(async () => {
    await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
    url1 = `http://127.0.0.1:${(h1.address() as AddressInfo).port}`;
    url2 = `http://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const c of clients) await closeClient(c);
    h1.closeAllConnections();
    h1.close();
    h2.close();
  });

  /** The call's outcome (code or "ok") and how long it took, or "hung" past 3 s. */
  async function outcome(call: () => Promise<unknown>): Promise<{ code: string | number; ms: number }> {
    const t0 = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<"hung">((r) => {
      timer = setTimeout(() => r("hung"), 3000);
    });
    try {
      const r = await Promise.race([call().then(() => "ok" as const), hung]);
      return { code: r, ms: Date.now() - t0 };
    } catch (e) {
      return { code: (e as { code: number }).code, ms: Date.now() - t0 };
    } finally {
      clearTimeout(timer);
    }
  }

  for (const httpVersion of ["1.1", "2"] as const) {
    it(`HTTP/${httpVersion}: a stalled reply body ends at the timeout with deadline_exceeded (upload and download calls)`, async () => {
      mode = "stall";
      const url = httpVersion === "1.1" ? url1 : url2;
      const up = createClient(UploadService, { providers: [url], httpVersion, retries: 0, timeoutMs: 300 });
      const down = createClient(DownloadService, { providers: [url], httpVersion, retries: 0, timeoutMs: 300 });
      clients.push(up, down);
      const a = await outcome(() => up.live("x", Readable.from([Buffer.alloc(10)]) as unknown as StreamedFile));
      const b = await outcome(() => down.readable(10) as unknown as Promise<unknown>);
      assert.equal(a.code, 4, `upload: ${JSON.stringify(a)}`);
      assert.equal(b.code, 4, `download: ${JSON.stringify(b)}`);
      if (httpVersion === "1.1") {
        await new Promise((r) => setTimeout(r, 100));
        assert.equal(sockets.size, 0, "the client closed its sockets");
      }
    });
  }

  it("HTTP/1.1: a connection closed mid-body is unavailable at once", async () => {
    mode = "cut";
    const up = createClient(UploadService, { providers: [url1], httpVersion: "1.1", retries: 0 });
    clients.push(up);
    const a = await outcome(() => up.live("x", Readable.from([Buffer.alloc(10)]) as unknown as StreamedFile));
    assert.equal(a.code, 14, JSON.stringify(a));
  });
});

/**
 * A file call (File/Blob arguments, a Download method) is not idempotent: when the connection
 * breaks after the request was sent, the handler may have run, so it must not be sent to another
 * provider (before: tried on every provider, the handler ran 3 times with retries: 2). A provider
 * that cannot be connected to is still skipped.
 */
describe("hostile: a client file call whose connection breaks after sending runs once", () => {
  let hits = 0;
  let version: "1.1" | "2" = "1.1";
  const handler = (req: http.IncomingMessage | http2.Http2ServerRequest) => {
    req.resume();
    req.on("end", () => {
      hits++;
      setTimeout(() => (version === "1.1" ? (req as http.IncomingMessage).socket.destroy() : (req as http2.Http2ServerRequest).stream.session?.destroy()), 10);
    });
  };
  const servers = { "1.1": [http.createServer(handler), http.createServer(handler)], "2": [http2.createServer(handler), http2.createServer(handler)] };
  const urls: Record<string, string[]> = { "1.1": [], "2": [] };
  const clients: object[] = [];
  let up: TripleServer;
  let dir = "";

  before(async () => {
    for (const v of ["1.1", "2"] as const) {
      for (const s of servers[v]) {
        await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
        urls[v].push(`http://127.0.0.1:${(s.address() as AddressInfo).port}`);
      }
    }
    dir = mkdtempSync(join(tmpdir(), "triple-files-once-"));
    up = createServer({ services: [new UploadService()], uploads: { dir } });
    await up.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    for (const c of clients) await closeClient(c);
    for (const v of ["1.1", "2"] as const) for (const s of servers[v]) s.close();
    await up.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const httpVersion of ["1.1", "2"] as const) {
    it(`HTTP/${httpVersion}: a Blob upload and a Download call are sent once (unavailable), not retried on the other provider`, async () => {
      version = httpVersion;
      const uc = createClient(UploadService, { providers: urls[httpVersion], httpVersion, retries: 2, timeoutMs: 3000 });
      const dc = createClient(DownloadService, { providers: urls[httpVersion], httpVersion, retries: 2, timeoutMs: 3000 });
      clients.push(uc, dc);
      hits = 0;
      await assert.rejects(uc.stored(new Blob(["x"]) as unknown as StreamedFile, "n"), (e: { code: number }) => e.code === 14);
      assert.equal(hits, 1, "upload handler runs");
      hits = 0;
      await assert.rejects(dc.readable(10) as unknown as Promise<unknown>, (e: { code: number }) => e.code === 14);
      assert.equal(hits, 1, "download handler runs");
    });

    it(`HTTP/${httpVersion}: a provider that refuses connections is still skipped`, async () => {
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
      const dead = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise<void>((r) => closed.close(() => r()));
      const uc = createClient(UploadService, { providers: [dead, up.url], httpVersion, retries: 2, timeoutMs: 3000, loadBalance: "roundrobin" });
      clients.push(uc);
      for (let i = 0; i < 4; i++) {
        const seen = (await uc.stored(new Blob(["abc"]) as unknown as StreamedFile, "n")) as { size: number };
        assert.equal(seen.size, 3);
      }
    });
  }
});
