import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { Code as ConnectCode, ConnectError, cors } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as esbuild from "esbuild";
import * as protobuf from "protobufjs";
import { type BrowserContext, chromium } from "playwright-core";
import { GREET_PROTO } from "../../samples/greet/greet-service.js";
import { Code } from "../../src/index.js";
import { greetDescriptors } from "../connect/greet-descriptors.js";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";
import { selfSigned } from "../helpers/tls.js";

/** The page's entry (TypeScript next to the sources; the compiled test lives under dist/). */
const PAGE_ENTRY = path.resolve(__dirname, "../../../test/web/page/connect-node-page.ts");

const VARIANTS = {
  "Connect JSON": { protocol: "connect" },
  "Connect proto": { protocol: "connect", contentType: "proto" },
  "gRPC-Web binary": { protocol: "grpc-web" },
} as const;

type Outcome = { value?: any; error?: { code: number; message: string }; ms: number };

/** connect-node's handler for the greet service, with CORS for `origin` (connect-es's own header lists). */
function connectHandler(origin: string, cancelled: string[]) {
  const { service } = greetDescriptors();
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(service, {
        async greet(req: { name: string }) {
          if (req.name !== "triple") throw new ConnectError(`name is not right: ${req.name}`, ConnectCode.InvalidArgument);
          return { greeting: req.name };
        },
        async *greetServerStream(req: { name: string }, ctx: { signal: AbortSignal }) {
          const n = req.name === "slow" ? 50 : 3;
          for (let i = 1; i <= n; i++) {
            if (ctx.signal.aborted) break;
            yield { greeting: `hello, ${req.name} (${i}/${n})` };
            if (req.name === "slow") await sleep(100);
          }
          if (ctx.signal.aborted) cancelled.push(req.name);
        },
      } as any);
    },
  });
  return (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => {
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("vary", "origin");
    if (req.method === "OPTIONS") {
      res.setHeader("access-control-allow-methods", cors.allowedMethods.join(", "));
      res.setHeader("access-control-allow-headers", cors.allowedHeaders.join(", "));
      res.setHeader("access-control-max-age", "600");
      res.statusCode = 204;
      res.end();
      return;
    }
    res.setHeader("access-control-expose-headers", cors.exposedHeaders.join(", "));
    handler(req as http.IncomingMessage, res as http.ServerResponse);
  };
}

function listen(server: http.Server | http2.Http2SecureServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

/**
 * The web client (`triple-rpc/web`) in headless Chromium against connect-node's server (not
 * ours), from another origin (CORS as connect-es lists it): Connect JSON and proto, gRPC-Web
 * binary; unary, an error, a server stream, cancelling a server stream mid-way; over HTTP/1.1 and
 * over TLS (HTTP/2 by ALPN). The contract is made in the page from greet.proto's JSON.
 * (connect-node has no gRPC-Web text mode.)
 */
describe("the web client in headless Chromium against connect-node's server", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let pages: http.Server;
  let plain: http.Server;
  let secure: http2.Http2SecureServer;
  let context: BrowserContext;
  let userDataDir: string;
  const cancelled: string[] = [];
  const results: Record<string, Record<string, Record<string, Outcome>>> = {};

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium`);
    const script = (
      await esbuild.build({
        entryPoints: [PAGE_ENTRY],
        bundle: true,
        write: false,
        format: "iife",
        platform: "browser",
        target: "chrome120",
        logLevel: "silent",
      })
    ).outputFiles[0].text;
    const html = '<!doctype html><html><head><title>connect-node</title><script src="/bundle.js"></script></head><body>connect-node</body></html>';
    pages = http.createServer((req, res) => {
      if (req.url === "/bundle.js") res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(script);
      else if (req.url === "/") res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
      else res.writeHead(404).end();
    });
    const pageOrigin = `http://localhost:${await listen(pages)}`;
    const { key, cert } = selfSigned();
    plain = http.createServer(connectHandler(pageOrigin, cancelled));
    secure = http2.createSecureServer({ key, cert, allowHTTP1: true }, connectHandler(pageOrigin, cancelled));
    const urls = { "HTTP/1.1": `http://127.0.0.1:${await listen(plain)}`, "HTTP/2 (TLS)": `https://127.0.0.1:${await listen(secure)}` };
    const root = new protobuf.Root();
    root.loadSync(GREET_PROTO, { keepCase: true });
    userDataDir = mkdtempSync(path.join(tmpdir(), "triple-connect-node-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, "--ignore-certificate-errors"],
    });
    const page = await context.newPage();
    await page.goto(`${pageOrigin}/`);
    for (const [name, url] of Object.entries(urls)) {
      results[name] = await page.evaluate(([u, json, variants]) => (globalThis as any).runConnectNode(u, json, variants), [
        url,
        root.toJSON(),
        VARIANTS,
      ] as const);
    }
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    secure?.close();
    await new Promise((r) => plain?.close(r));
    await new Promise((r) => pages?.close(r));
  });

  for (const transport of ["HTTP/1.1", "HTTP/2 (TLS)"]) {
    for (const variant of Object.keys(VARIANTS)) {
      it(`${transport}, ${variant}: unary, an error, a server stream, a cancelled stream`, () => {
        const r = results[transport][variant];
        assert.deepEqual(r.unary.value, { greeting: "triple" }, JSON.stringify(r.unary));
        assert.deepEqual(r.error.error, { code: Code.InvalidArgument, message: "name is not right: nobody" });
        assert.deepEqual(r.stream.value, ["hello, browser (1/3)", "hello, browser (2/3)", "hello, browser (3/3)"], JSON.stringify(r.stream));
        assert.equal(r.cancel.error?.code, Code.Cancelled, JSON.stringify(r.cancel));
        // One-sided: the stream's own end is 5 s away (50 messages, 100 ms apart), so an end well
        // before it came from the cancel (a loaded machine only delays it; was 2 s).
        assert.ok(r.cancel.ms < 4500, `the cancel took ${r.cancel.ms} ms (the stream runs 5 s)`);
      });
    }
  }

  it("connect-node's handlers saw the cancelled streams end early", async () => {
    for (let i = 0; i < 40 && cancelled.length < 6; i++) await sleep(50);
    assert.ok(cancelled.length >= 1, `handlers that saw the cancel: ${cancelled.length} of 6`);
  });
});
