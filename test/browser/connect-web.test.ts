import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";
import * as esbuild from "esbuild";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { GREET_CACHE_CONTROL, GREET_ERROR_DOMAIN, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { Code, createServer, type TripleServer } from "../../src/index.js";
import { greetDescriptors } from "../connect/greet-descriptors.js";

/** The page's entry (plain JavaScript next to the sources; the compiled test lives under dist/). */
const PAGE_ENTRY = path.resolve(__dirname, "../../../test/browser/page/connect-web-page.mjs");

/** Bundles the page's script with esbuild: connect-web, connect and @bufbuild/protobuf in one file. */
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

/** Serves the page and its bundle, so the browser has an origin of its own to call the RPC server from. */
function startPageServer(script: string): Promise<http.Server> {
  const html = '<!doctype html><html><head><title>connect-web</title><script src="/bundle.js"></script></head><body>connect-web</body></html>';
  const s = http.createServer((req, res) => {
    if (req.url === "/bundle.js") res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(script);
    else if (req.url === "/") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}

interface Outcome {
  value?: unknown;
  error?: { code: number; message: string; details?: unknown[] };
  ms?: number;
  cacheControl?: string | null;
}

/**
 * Browser clients for real (issue 16): a page bundled with esbuild runs @connectrpc/connect-web's
 * Connect transport (JSON and binary) and gRPC-Web transport in headless Chromium against the
 * greet sample on another origin, so every call is cross-origin and CORS (preflights, allowed
 * and exposed headers) is exercised by the browser itself: unary, server streaming, an error
 * with details, a deadline, and GET for the idempotent method.
 */
describe("connect-web from headless Chromium", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let server: TripleServer;
  let pages: http.Server;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  const requests: { method: string; url: string }[] = [];
  let results: Record<string, Record<string, Outcome>>;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium`);
    pages = await startPageServer(await bundle());
    const pageOrigin = `http://localhost:${(pages.address() as AddressInfo).port}`;
    server = createServer({ services: [new GreetServiceImpl()], cors: { origins: [pageOrigin] } });
    await server.listen({ port: 0 });
    userDataDir = mkdtempSync(path.join(tmpdir(), "triple-connect-web-"));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    page = await context.newPage();
    page.on("request", (r) => requests.push({ method: r.method(), url: r.url() }));
    await page.goto(`${pageOrigin}/`);
    const setBase64 = Buffer.from(greetDescriptors().setBytes).toString("base64");
    results = await page.evaluate(([url, set]) => (globalThis as any).runConnectWeb(url, set), [server.url, setBase64] as const);
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await server?.close();
    await new Promise((r) => pages?.close(r));
  });

  for (const transport of ["Connect JSON", "Connect binary", "gRPC-Web binary"]) {
    describe(transport, () => {
      it("unary Greet", () => {
        assert.deepEqual(results[transport].unary, { value: "triple" });
      });

      it("the wrong name: unknown with the handler's text", () => {
        assert.deepEqual(results[transport].wrongName, { error: { code: Code.Unknown, message: "name is not right: nobody" } });
      });

      it("server streaming: the three greetings", () => {
        assert.deepEqual(results[transport].serverStream, { value: ["hello, web (1/3)", "hello, web (2/3)", "hello, web (3/3)"] });
      });

      it("an error with details: the google.rpc.ErrorInfo read back in the page", () => {
        assert.deepEqual(results[transport].details, {
          error: {
            code: Code.InvalidArgument,
            message: "name is not right: nobody",
            details: [{ reason: "NAME_NOT_RIGHT", domain: GREET_ERROR_DOMAIN, metadata: { name: "nobody", accepted: "triple" } }],
          },
        });
      });

      it("a deadline (timeoutMs 300) is deadline_exceeded, well before the handler's 5 s", () => {
        const o = results[transport].deadline;
        assert.equal(o.error?.code, Code.DeadlineExceeded, JSON.stringify(o));
        // One-sided: before the handler's own 5 s (less a margin), so the deadline ended it.
        assert.ok((o.ms ?? 0) < 4900, `took ${o.ms} ms`);
      });
    });
  }

  it("GET (useHttpGet) on the idempotent GreetCached, JSON and binary, with Cache-Control readable", () => {
    for (const transport of ["Connect JSON", "Connect binary"]) {
      assert.deepEqual(results[transport].get, { value: "hello, get", cacheControl: GREET_CACHE_CONTROL });
    }
    const gets = requests.filter((r) => r.method === "GET" && r.url.includes("/greet.GreetService/GreetCached?"));
    assert.equal(gets.length, 2, JSON.stringify(requests));
    for (const g of gets) assert.equal(new URL(g.url).searchParams.get("connect"), "v1");
  });

  it("every call went from the page's origin to the server's (cross-origin, so CORS applied)", () => {
    const api = new URL(server.url);
    const pageUrl = new URL(page.url());
    assert.notEqual(pageUrl.origin, api.origin);
    const calls = requests.filter((r) => new URL(r.url).origin === api.origin);
    // 3 transports × 5 calls, and 2 GETs.
    assert.equal(calls.length, 17, JSON.stringify(calls));
  });

  /**
   * Google's `grpc-web` client (XHR), in text mode (its default: application/grpc-web-text, the
   * response's base64 decoded as it streams in) and in binary mode, from the same page.
   */
  describe("Google grpc-web (text and binary)", () => {
    let web: Record<string, Record<string, Outcome>>;
    before(async () => {
      web = await page.evaluate((url) => (globalThis as any).runGrpcWebJs(url), server.url);
    });

    for (const format of ["text", "binary"]) {
      it(`${format}: unary, the wrong name's code and text, server streaming, a deadline`, () => {
        const r = web[format];
        assert.deepEqual(r.unary, { value: "triple" });
        assert.deepEqual(r.wrongName, { error: { code: Code.Unknown, message: "name is not right: nobody" } });
        assert.deepEqual(r.serverStream, { value: ["hello, web (1/3)", "hello, web (2/3)", "hello, web (3/3)"] });
        assert.equal(r.deadline.error?.code, Code.DeadlineExceeded, JSON.stringify(r.deadline));
        // One-sided: before the handler's own 5 s (less a margin), so the deadline ended it.
        assert.ok((r.deadline.ms ?? 0) < 4900, `took ${r.deadline.ms} ms`);
      });
    }
  });
});
