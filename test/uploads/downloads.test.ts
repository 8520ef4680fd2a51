import * as assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { DownloadService, RangeFileService, UploadService } from "./services.js";
import { MiB } from "./upload-client.js";

interface Got {
  status: number;
  headers: Record<string, unknown>;
  body: Buffer;
  /** The response ended cleanly (false: cut). */
  complete: boolean;
}

/** POSTs a JSON body and reads the response; `slow` reads it at about 1 chunk per ms... per tick. */
function get1(url: string, path: string, args: unknown[], pauseMs = 0): Promise<Got> {
  const u = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: "POST", agent: false, headers: { "content-type": "application/json" } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => {
          chunks.push(c);
          if (pauseMs > 0) {
            res.pause();
            setTimeout(() => res.resume(), pauseMs);
          }
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }));
        res.on("error", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: false }));
        res.on("aborted", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: false }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(args));
  });
}

function get2(url: string, path: string, args: unknown[]): Promise<Got> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", () => {});
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
    let status = 0;
    let headers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("close", () => {
      session.close();
      resolve({ status, headers, body: Buffer.concat(chunks), complete: req.rstCode === http2.constants.NGHTTP2_NO_ERROR });
    });
    req.on("error", () => {});
    req.end(JSON.stringify(args));
    void reject;
  });
}

/** A GET with an optional Range header over HTTP/1.1. */
function getRange1(url: string, path: string, range: string | undefined): Promise<Got> {
  const u = new URL(encodeURI(path), url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = range ? { range } : {};
    http
      .get({ host: u.hostname, port: u.port, path: u.pathname, agent: false, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: true }));
      })
      .on("error", reject);
  });
}

/** The same over HTTP/2. */
function getRange2(url: string, path: string, range: string | undefined): Promise<Got> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const req = session.request({ ":method": "GET", ":path": encodeURI(path), ...(range ? { range } : {}) });
    let status = 0;
    let headers: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    req.on("response", (h) => {
      status = Number(h[":status"]);
      headers = h;
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      resolve({ status, headers, body: Buffer.concat(chunks), complete: true });
    });
    req.on("error", reject);
    req.end();
  });
}

const gets = [
  ["HTTP/1.1", get1],
  ["HTTP/2", get2],
] as const;

describe("downloads: a method returns a file or a stream", () => {
  let server: TripleServer;
  let url: string;
  let dir: string;
  let file: string;
  const content = Buffer.alloc(3 * MiB + 5, 9);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "triple-down-"));
    file = join(dir, "report 2024.bin");
    writeFileSync(file, content);
    RangeFileService.dir = dir;
    server = createServer({ services: [new DownloadService(), new UploadService(), new RangeFileService()], uploads: { dir } });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [proto, get] of gets) {
    it(`${proto}: Download.file → Content-Type, Content-Length, Content-Disposition and the bytes`, async () => {
      const r = await get(url, "/test.Downloads/file", [file]);
      assert.equal(r.status, 200);
      assert.equal(r.headers["content-type"], "application/x-test");
      assert.equal(r.headers["content-length"], String(content.length));
      assert.equal(r.headers["content-disposition"], 'attachment; filename="report 2024.bin"');
      assert.ok(r.complete);
      assert.ok(r.body.equals(content));
    });

    it(`${proto}: a Readable of unknown size streams without Content-Length`, async () => {
      const r = await get(url, "/test.Downloads/readable", [5 * MiB + 1]);
      assert.equal(r.status, 200);
      assert.equal(r.headers["content-type"], "application/octet-stream");
      assert.equal(r.headers["content-length"], undefined);
      assert.equal(r.body.length, 5 * MiB + 1);
      assert.ok(r.complete);
    });

    it(`${proto}: a Blob and a web ReadableStream`, async () => {
      const b = await get(url, "/test.Downloads/blob", []);
      assert.equal(b.headers["content-type"], "text/csv");
      assert.equal(b.headers["content-length"], "9");
      assert.equal(b.body.toString(), "blob body");
      const w = await get(url, "/test.Downloads/web", []);
      assert.equal(w.body.toString(), "web stream");
    });

    it(`${proto}: a source failing midway cuts the response (never a truncated success)`, async () => {
      const r = await get(url, "/test.Downloads/broken", []);
      assert.equal(r.status, 200);
      assert.equal(r.complete, false);
      assert.ok(r.body.length <= 16 * 65536);
      const ok = await get(url, "/test.Downloads/named", ["a.txt"]);
      assert.equal(ok.body.toString(), "hello");
    });
  }

  for (const [proto, get] of [
    ["HTTP/1.1", getRange1],
    ["HTTP/2", getRange2],
  ] as const) {
    it(`${proto}: a GET route's Download.file answers Range requests (206, 416), POST never`, async () => {
      const whole = await get(url, "/dl/report 2024.bin", undefined);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers["accept-ranges"], "bytes");
      assert.equal(whole.body.length, content.length);
      const mid = await get(url, "/dl/report 2024.bin", "bytes=10-19");
      assert.equal(mid.status, 206);
      assert.equal(mid.headers["content-range"], `bytes 10-19/${content.length}`);
      assert.equal(mid.headers["content-length"], "10");
      assert.ok(mid.body.equals(content.subarray(10, 20)));
      const tail = await get(url, "/dl/report 2024.bin", "bytes=-5");
      assert.equal(tail.status, 206);
      assert.ok(tail.body.equals(content.subarray(content.length - 5)));
      const from = await get(url, "/dl/report 2024.bin", `bytes=${content.length - 3}-`);
      assert.equal(from.body.length, 3);
      const bad = await get(url, "/dl/report 2024.bin", `bytes=${content.length}-`);
      assert.equal(bad.status, 416);
      assert.equal(bad.headers["content-range"], `bytes */${content.length}`);
      const multi = await get(url, "/dl/report 2024.bin", "bytes=0-1,5-6");
      assert.equal(multi.status, 200);
      const post = await get1(url, "/test.Downloads/file", [file]);
      assert.equal(post.headers["accept-ranges"], undefined);
    });
  }

  it("a non-ASCII file name gets an ASCII fallback and a UTF-8 filename*", async () => {
    const r = await get1(url, "/test.Downloads/named", ['résumé "1".txt']);
    assert.equal(r.headers["content-disposition"], `attachment; filename="r_sum_ _1_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%221%22.txt`);
  });

  it("backpressure: a slow reader holds the source back (no buffering of the whole body)", async () => {
    const size = 64 * MiB;
    const pending = get1(url, "/test.Downloads/readable", [size], 5);
    await new Promise((r) => setTimeout(r, 500));
    // In half a second a slow reader took about 100 chunks; the source is at most a few MiB ahead of it.
    assert.ok(DownloadService.produced < 16 * MiB, `produced ${DownloadService.produced} bytes ahead`);
    void pending.catch(() => {});
  });

  it("an uploaded file echoed back as a download", async () => {
    const body = Buffer.concat([
      Buffer.from('--b0\r\nContent-Disposition: form-data; name="file"; filename="up.txt"\r\nContent-Type: text/plain\r\n\r\n'),
      Buffer.alloc(2 * MiB, 0x41),
      Buffer.from("\r\n--b0--\r\n"),
    ]);
    const r = await new Promise<Got>((resolve, reject) => {
      const u = new URL("/test.Downloads/echo", url);
      const req = http.request(
        { host: u.hostname, port: u.port, path: u.pathname, method: "POST", agent: false, headers: { "content-type": "multipart/form-data; boundary=b0" } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: true }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers["content-type"], "text/plain");
    assert.equal(r.headers["content-disposition"], 'attachment; filename="up.txt"');
    assert.equal(
      createHash("sha256").update(r.body).digest("hex"),
      createHash("sha256")
        .update(Buffer.alloc(2 * MiB, 0x41))
        .digest("hex"),
    );
  });
});
