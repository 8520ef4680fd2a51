import * as assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createServer, Download, Get, Path, Service, type TripleServer } from "../../src/index.js";
import { H2, post1, type Reply } from "../helpers/http.js";

/**
 * Issue 33, degraded (small ones): a `Range` with an `If-Range` naming another version of the
 * file still got 206 (RFC 9110 §13.1.5: the whole file, 200, since the client's part belongs to
 * another version); `/docs` had no Content-Security-Policy and any site could frame it;
 * `Download.file` of a missing file answered 500 with `ENOENT: …, stat '/srv/…/name'`, the
 * server's directories, in the body.
 */
@Service("hostile.Files")
class Files {
  static dir = "";
  @Get("/files/{name}")
  get(@Path("name") name: string): Promise<Download> {
    return Download.file(join(Files.dir, name.replace(/[/\\]/g, "_")));
  }
}

const BODY = Buffer.from("0123456789abcdefghijklmnopqrstuvwxyz");

describe("hostile: If-Range, the docs page's framing, Download.file's errors (issue 33, degraded)", () => {
  let server: TripleServer;
  let dir: string;
  const logged: { obj: Record<string, unknown>; msg: string }[] = [];
  const push = (obj: object, msg: string) => void logged.push({ obj: obj as Record<string, unknown>, msg });
  const logger = { info: push, warn: push, error: push };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "hostile-files-"));
    Files.dir = dir;
    writeFileSync(join(dir, "a.txt"), BODY);
    mkdirSync(join(dir, "sub"));
    // A second old: its Last-Modified is a strong validator (RFC 9110 §8.8.2.2).
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, "a.txt"), old, old);
    server = createServer({ services: [new Files()], openapi: { title: "Files" }, logger });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const get1 = (path: string, headers: Record<string, string> = {}) => post1(server.url, path, { method: "GET", headers });

  it("If-Range: a matching ETag or date gets the range (206); another tag, a weak tag or another date gets the whole file (200), over HTTP/1.1 and HTTP/2", async () => {
    const whole = await get1("/files/a.txt");
    assert.equal(whole.status, 200);
    const etag = String(whole.headers.etag);
    const lastModified = String(whole.headers["last-modified"]);
    assert.match(etag, /^"[0-9a-f]+-[0-9a-f]+"$/);
    assert.equal(new Date(lastModified).toUTCString(), lastModified);
    const h2 = new H2(server.url);
    try {
      for (const [name, send] of [
        ["HTTP/1.1", (h: Record<string, string>) => get1("/files/a.txt", h)],
        ["HTTP/2", (h: Record<string, string>) => h2.request("/files/a.txt", { method: "GET", headers: h })],
      ] as [string, (h: Record<string, string>) => Promise<Reply>][]) {
        const ranged = async (ifRange: string) => send({ range: "bytes=10-19", "if-range": ifRange });
        for (const ok of [etag, lastModified]) {
          const r = await ranged(ok);
          assert.equal(r.status, 206, `${name} If-Range ${ok}`);
          assert.equal(r.body.toString(), "abcdefghij");
        }
        for (const other of ['"another-version"', `W/${etag}`, new Date(Date.parse(lastModified) - 1000).toUTCString(), "not a validator"]) {
          const r = await ranged(other);
          assert.equal(r.status, 200, `${name} If-Range ${other}: ${r.status}`);
          assert.ok(r.body.equals(BODY), `${name} If-Range ${other}: the whole file`);
          assert.equal(r.headers["content-range"], undefined);
        }
      }
    } finally {
      h2.close();
    }
  });

  it("/docs says Content-Security-Policy (frame-ancestors 'none') and X-Frame-Options: DENY", async () => {
    const r = await get1("/docs");
    assert.equal(r.status, 200);
    const csp = String(r.headers["content-security-policy"]);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.equal(r.headers["x-frame-options"], "DENY");
  });

  it("Download.file of a missing file or of a directory: 500 without the server's path in the body; the log line has it", async () => {
    for (const [name, want] of [
      ["missing.txt", /^Download\.file: the file cannot be read \(ENOENT\)$/],
      ["sub", /^Download\.file: not a regular file$/],
    ] as const) {
      const r = await get1(`/files/${name}`);
      assert.equal(r.status, 500, r.text());
      assert.ok(!r.text().includes(dir), `the body names the directory: ${r.text()}`);
      assert.match(r.json().message, want);
    }
    const line = logged.find((l) => l.msg.includes("Download.file: the file cannot be read"));
    assert.ok(line, "no log line");
    assert.ok(String(line.obj.cause).includes(join(dir, "missing.txt")), `the log line's cause: ${line.obj.cause}`);
  });
});
