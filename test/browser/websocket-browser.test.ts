import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as esbuild from "esbuild";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { Code, createServer, type TripleServer } from "../../src/index.js";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";

/** The page's entry (plain JavaScript next to the sources; the compiled test lives under dist/). */
const PAGE_ENTRY = path.resolve(__dirname, "../../../test/browser/page/websocket-page.mjs");

async function bundle(): Promise<string> {
  const r = await esbuild.build({
    entryPoints: [PAGE_ENTRY],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "chrome120",
    logLevel: "silent",
  });
  return r.outputFiles[0].text;
}

function startPageServer(script: string): Promise<http.Server> {
  const html = '<!doctype html><html><head><title>websocket</title><script src="/bundle.js"></script></head><body>websocket</body></html>';
  const s = http.createServer((req, res) => {
    if (req.url === "/bundle.js") res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(script);
    else if (req.url === "/") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}

/**
 * triple-rpc/web's WebSocket transport in headless Chromium (issue 38): a page bundled with
 * esbuild opens client- and bidi-streaming calls on our server from another origin (allowed by
 * the server's cors.origins, checked at the handshake): 10,000 messages each way, a client
 * stream, a deadline from the query, a cancel, and an unknown method refused at the handshake.
 */
describe("Triple over WebSocket from headless Chromium", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let server: TripleServer;
  let pages: http.Server;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let results: Record<string, { value?: any; error?: { code: number; message: string }; count?: number; last?: any; ms?: number }>;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium`);
    pages = await startPageServer(await bundle());
    const pageOrigin = `http://localhost:${(pages.address() as AddressInfo).port}`;
    server = createServer({ services: [new GreetServiceImpl()], cors: { origins: [pageOrigin] } });
    await server.listen({ port: 0 });
    userDataDir = mkdtempSync(path.join(tmpdir(), "triple-websocket-"));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await context.newPage();
    await page.goto(`${pageOrigin}/`);
    results = await page.evaluate((url) => (globalThis as any).runWebSocket(url), server.url);
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await server?.close();
    await new Promise((r) => pages?.close(r));
  });

  it("bidi: 10,000 messages each way, in order, close 1000", () => {
    const b = results.bidi;
    assert.equal(b.error, undefined, JSON.stringify(b.error));
    assert.equal(b.count, 10_000);
    assert.deepEqual(b.last, { greeting: "m9999" });
  });

  it("client streaming: three messages, the end-of-request message, one answer", () => {
    assert.equal(results.clientStream.error, undefined, JSON.stringify(results.clientStream));
    assert.equal(results.clientStream.value.length, 1);
  });

  it("a deadline from the query (?tri-service-timeout=300) ends the call with deadline_exceeded", () => {
    assert.equal(results.deadline.error?.code, Code.DeadlineExceeded, JSON.stringify(results.deadline));
  });

  it("an aborted signal cancels the call at once", () => {
    assert.equal(results.cancel.error?.code, Code.Cancelled, JSON.stringify(results.cancel));
    assert.deepEqual(results.cancel.value, [{ greeting: "x" }]);
  });

  it("an unknown method is refused at the handshake: unavailable in the browser, which is not told the 404", () => {
    assert.equal(results.unknown.error?.code, Code.Unavailable, JSON.stringify(results.unknown));
  });
});
