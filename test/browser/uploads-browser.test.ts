import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { createServer, type TripleServer } from "../../src/index.js";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";
import { DownloadService, UploadService } from "../uploads/services.js";

/** Serves the page with a plain multipart form posting to the RPC server's decorated method. */
function startPageServer(api: () => string): Promise<http.Server> {
  const s = http.createServer((req, res) => {
    if (req.url === "/favicon.ico") {
      res.writeHead(404).end();
      return;
    }
    const page = `<!doctype html><html><head><title>uploads</title></head><body>
<form id="f" method="post" enctype="multipart/form-data" action="${api()}/test.Downloads/echo">
<input type="file" name="file"><button id="go" type="submit">send</button></form></body></html>`;
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}

/**
 * Uploads and downloads from a real browser (issue 27): headless Chromium submits a plain
 * `<form enctype="multipart/form-data">` to a decorated method and gets the file back as a
 * download; `fetch(FormData)` uploads a 3 MiB Blob to a streamed `StreamedFile` parameter and
 * downloads it back.
 */
describe("uploads and downloads from headless Chromium", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let server: TripleServer;
  let pages: http.Server;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let uploadDir: string;
  let origin: string;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium`);
    pages = await startPageServer(() => server.url);
    origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    uploadDir = mkdtempSync(path.join(tmpdir(), "triple-browser-up-"));
    server = createServer({
      services: [new UploadService(), new DownloadService()],
      uploads: { dir: uploadDir },
      cors: { origins: [origin] },
    });
    await server.listen({ port: 0 });
    userDataDir = mkdtempSync(path.join(tmpdir(), "triple-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, acceptDownloads: true });
    page = await context.newPage();
    await page.goto(`${origin}/`);
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await server?.close();
    await new Promise((r) => pages?.close(r));
    if (uploadDir) rmSync(uploadDir, { recursive: true, force: true });
  });

  it("a plain <form enctype=multipart/form-data> uploads a file and the browser downloads it back", async () => {
    const content = Buffer.alloc(2 * 1024 * 1024 + 11, 0x5a);
    await page.setInputFiles('input[name="file"]', { name: "report 1.txt", mimeType: "text/plain", buffer: content });
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#go")]);
    assert.equal(download.suggestedFilename(), "report 1.txt");
    const saved = await download.path();
    assert.ok(readFileSync(saved).equals(content));
    assert.deepEqual(readdirSync(uploadDir), []);
  });

  it("fetch(FormData) streams a 3 MiB Blob into a StreamedFile parameter and downloads it back", async () => {
    await page.goto(`${origin}/`);
    const api = server.url;
    const r = await page.evaluate(async (api) => {
      const bytes = new Uint8Array(3 * 1024 * 1024);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
      const hex = async (b: ArrayBuffer) => [...new Uint8Array(await crypto.subtle.digest("SHA-256", b))].map((x) => x.toString(16).padStart(2, "0")).join("");
      const form = new FormData();
      form.append("label", "from the browser");
      form.append("file", new Blob([bytes], { type: "application/x-test" }), "data.bin");
      const up = await fetch(`${api}/test.Uploads/live`, { method: "POST", body: form });
      const seen = (await up.json()) as { sha256: string; size: number; filename: string; label: string; streaming: boolean };
      const back = new FormData();
      back.append("file", new Blob([bytes], { type: "application/x-test" }), "data.bin");
      const down = await fetch(`${api}/test.Downloads/echo`, { method: "POST", body: back });
      const got = await down.arrayBuffer();
      return {
        status: up.status,
        seen,
        sent: await hex(bytes.buffer),
        downStatus: down.status,
        type: down.headers.get("content-type"),
        got: await hex(got),
        size: got.byteLength,
      };
    }, api);
    assert.equal(r.status, 200, JSON.stringify(r.seen));
    assert.equal(r.seen.sha256, r.sent);
    assert.equal(r.seen.size, 3 * 1024 * 1024);
    assert.equal(r.seen.filename, "data.bin");
    assert.equal(r.seen.label, "from the browser");
    assert.equal(r.seen.streaming, true);
    assert.equal(r.downStatus, 200);
    assert.equal(r.type, "application/x-test");
    assert.equal(r.got, r.sent);
  });
});
