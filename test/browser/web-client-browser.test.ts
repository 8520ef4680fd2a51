import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as esbuild from "esbuild";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { Code, createServer, type TripleServer } from "../../src/index.js";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";
import { selfSigned } from "../helpers/tls.js";
import { WebTestService } from "../web/service.js";

/** The page's entry (TypeScript next to the sources; the compiled test lives under dist/). */
const PAGE_ENTRY = path.resolve(__dirname, "../../../test/web/page/browser-page.ts");

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
  const html = '<!doctype html><html><head><title>web client</title><script src="/bundle.js"></script></head><body>web client</body></html>';
  const s = http.createServer((req, res) => {
    if (req.url === "/bundle.js") res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(script);
    else if (req.url === "/") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}

const VARIANTS = {
  "Triple JSON": { protocol: "triple" },
  "Triple proto": { protocol: "triple", contentType: "proto" },
  "Connect JSON": { protocol: "connect" },
  "Connect proto": { protocol: "connect", contentType: "proto" },
  "gRPC-Web binary": { protocol: "grpc-web" },
  "gRPC-Web text": { protocol: "grpc-web", grpcWebFormat: "text" },
} as const;

type Outcome = { value?: any; error?: { code: number; message: string; violations: unknown[] }; ms: number };

/**
 * The web client (`triple-rpc/web`) in headless Chromium, bundled with esbuild from the sources
 * with the test contract, against our server on another origin (so CORS applies to every call):
 * over plain HTTP (HTTP/1.1) and over TLS (HTTP/2 by ALPN; a self-signed certificate,
 * `--ignore-certificate-errors`), every protocol and format: unary, revival of a decorated class
 * with a Date, bigint, Map and bytes, errors with validation violations, a server stream, a
 * deadline, cancellation, metadata.
 */
describe("the web client in headless Chromium", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let plain: TripleServer;
  let secure: TripleServer;
  let pages: http.Server;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  const results: Record<string, Record<string, Record<string, Outcome>>> = {};

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium`);
    pages = await startPageServer(await bundle());
    const pageOrigin = `http://localhost:${(pages.address() as AddressInfo).port}`;
    const { key, cert } = selfSigned();
    plain = createServer({ services: [new WebTestService()], cors: { origins: [pageOrigin], allowedHeaders: ["x-custom"], exposedHeaders: ["x-answer"] } });
    secure = createServer({
      services: [new WebTestService()],
      cors: { origins: [pageOrigin], allowedHeaders: ["x-custom"], exposedHeaders: ["x-answer"] },
      tls: { key, cert },
    });
    await plain.listen({ port: 0, host: "127.0.0.1" });
    await secure.listen({ port: 0, host: "127.0.0.1" });
    userDataDir = mkdtempSync(path.join(tmpdir(), "triple-web-client-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, "--ignore-certificate-errors"],
    });
    page = await context.newPage();
    await page.goto(`${pageOrigin}/`);
    for (const [name, server] of [
      ["HTTP/1.1", plain],
      ["HTTP/2 (TLS)", secure],
    ] as const) {
      results[name] = await page.evaluate(([url, variants]) => (globalThis as any).runWeb(url, variants), [server.url, VARIANTS] as const);
    }
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await plain?.close();
    await secure?.close();
    await new Promise((r) => pages?.close(r));
  });

  for (const transport of ["HTTP/1.1", "HTTP/2 (TLS)"]) {
    for (const variant of Object.keys(VARIANTS)) {
      it(`${transport}, ${variant}: unary, revival, errors, a server stream, a deadline, cancellation, metadata`, () => {
        const r = results[transport][variant];
        assert.equal(r.greet.value, "hello, browser", JSON.stringify(r.greet));
        assert.equal(r.add.value, 42);
        assert.deepEqual(r.profile.value, {
          isProfile: true,
          initials: "AL",
          born: "2000-02-29T12:00:00.000Z",
          balance: "42n",
          scores: [
            ["a", 1],
            ["b", 2],
          ],
          avatar: [0, 1, 254, 255],
        });
        assert.deepEqual(r.error.error, { code: Code.InvalidArgument, message: "name is not right: nobody", violations: [] });
        assert.equal(r.violations.error?.code, Code.InvalidArgument);
        assert.deepEqual(r.violations.error?.violations, [
          { field: "code", description: "must be at most 4 characters long" },
          { field: "code", description: "must match ^[a-z]+$" },
          { field: "n", description: "must be at least 1" },
        ]);
        assert.deepEqual(r.stream.value, ["10000000000n", "20000000000n", "30000000000n"], JSON.stringify(r.stream));
        assert.equal(r.deadline.error?.code, Code.DeadlineExceeded, JSON.stringify(r.deadline));
        // One-sided: before the handler's own 5 s (less a margin), so the deadline ended it.
        assert.ok(r.deadline.ms < 4900, `the deadline took ${r.deadline.ms} ms`);
        assert.equal(r.cancel.error?.code, Code.Cancelled, JSON.stringify(r.cancel));
        assert.equal(r.headers.value?.["x-custom"], "from-page", JSON.stringify(r.headers));
        assert.equal(r.headers.value?.[":http-version"], transport === "HTTP/1.1" ? "1.1" : "2");
      });
    }
  }
});
