import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { UserService } from "../robustness/fixture-services.js";

/** Serves one empty HTML page, so the browser has an origin to call the RPC server from. */
function startPageServer(): Promise<http.Server> {
  const page = "<!doctype html><html><head><title>triple-rpc CORS test</title></head><body>cors</body></html>";
  const s = http.createServer((req, res) => {
    if (req.url === "/favicon.ico") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  });
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve(s)));
}

/** What a fetch from the page saw. */
interface Seen {
  ok?: boolean;
  status?: number;
  body?: string;
  headers?: Record<string, string | null>;
  error?: string;
}

/**
 * CORS from a real browser (issue 6 item 5): a page on one localhost port calls the server on
 * another with fetch — JSON, form and multipart bodies — reads answers, an error body and the
 * exposed protocol headers; an origin that is not allowed is refused.
 */
describe("CORS from headless Chromium", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let server: TripleServer;
  let pages: http.Server;
  let context: BrowserContext;
  let page: Page;
  let userDataDir: string;
  let api: string;
  let allowedOrigin: string;
  let otherOrigin: string;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium`);
    pages = await startPageServer();
    const pagePort = (pages.address() as AddressInfo).port;
    // Same page server, two origins: localhost is allowed, 127.0.0.1 is not.
    allowedOrigin = `http://localhost:${pagePort}`;
    otherOrigin = `http://127.0.0.1:${pagePort}`;
    server = createServer({
      services: [new GreetServiceImpl(), new UserService()],
      cors: { origins: [allowedOrigin], maxAgeSeconds: 600 },
    });
    await server.listen({ port: 0 });
    api = server.url;
    userDataDir = mkdtempSync(path.join(tmpdir(), "triple-chromium-"));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    page = await context.newPage();
    await page.goto(`${allowedOrigin}/`);
  });

  after(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await server?.close();
    await new Promise((r) => pages?.close(r));
  });

  /** Runs `fetch(url, init)` in the page; `kind` picks how the body is built there. */
  function browserFetch(url: string, kind: "json" | "form" | "multipart" | "grpc", payload: unknown, headers: Record<string, string> = {}): Promise<Seen> {
    return page.evaluate(
      async ({ url, kind, payload, headers }) => {
        let body: RequestInit["body"];
        const h: Record<string, string> = { ...headers };
        if (kind === "json") {
          body = JSON.stringify(payload);
          h["content-type"] = "application/json";
        } else if (kind === "form") {
          body = new URLSearchParams(payload as Record<string, string>);
        } else if (kind === "multipart") {
          const fd = new FormData();
          const p = payload as { file: string; filename: string; note: string };
          fd.append("file", new Blob([p.file], { type: "text/plain" }), p.filename);
          fd.append("note", p.note);
          body = fd;
        } else {
          body = new Uint8Array([0, 0, 0, 0, 0]);
          h["content-type"] = "application/grpc";
        }
        try {
          const res = await fetch(url, { method: "POST", body, headers: h });
          const names = ["content-type", "grpc-status", "grpc-message", "tri-trace-id", "tri-request-id"];
          const seen: Record<string, string | null> = {};
          for (const n of names) seen[n] = res.headers.get(n);
          return { ok: res.ok, status: res.status, body: await res.text(), headers: seen };
        } catch (e) {
          return { error: String(e) };
        }
      },
      { url, kind, payload, headers },
    );
  }

  it("JSON (preflighted: content-type and tri-* headers) → 200 with the greeting", async () => {
    const r = await browserFetch(
      `${api}/greet.GreetService/Greet`,
      "json",
      { name: "triple" },
      {
        "tri-protocol-version": "1.0.0",
        "tri-service-timeout": "5000",
        authorization: "Bearer not-checked-here",
      },
    );
    assert.equal(r.error, undefined);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body ?? ""), { greeting: "triple" });
  });

  it("form (URLSearchParams) → 200, fields bound by name", async () => {
    const r = await browserFetch(`${api}/robust.User/Login`, "form", { username: "ann", location: "Oslo" });
    assert.equal(r.error, undefined);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body ?? ""), { message: "ann@Oslo" });
  });

  it("multipart (FormData with a file) → 200, the file and the note bound", async () => {
    const r = await browserFetch(`${api}/robust.User/Upload`, "multipart", { file: "hello browser", filename: "hello.txt", note: "n1" });
    assert.equal(r.error, undefined);
    assert.equal(r.status, 200, r.body);
    assert.deepEqual(JSON.parse(r.body ?? ""), { size: 13, filename: "hello.txt", note: "n1" });
  });

  it("an error is readable cross-origin: 500 with the JSON error body", async () => {
    const r = await browserFetch(`${api}/greet.GreetService/Greet`, "json", { name: "nobody" });
    assert.equal(r.error, undefined);
    assert.equal(r.status, 500);
    assert.deepEqual(JSON.parse(r.body ?? ""), { status: 70, message: "name is not right: nobody", code: "unknown" });
  });

  it("tri-* response headers are exposed to the page", async () => {
    const r = await browserFetch(`${api}/robust.User/Traced`, "json", "t1");
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers?.["tri-trace-id"], "trace-t1");
    assert.equal(r.headers?.["tri-request-id"], "req-t1");
  });

  it("grpc-status and grpc-message are exposed to the page", async () => {
    // gRPC needs HTTP/2; over the browser's HTTP/1.1 the server answers with grpc-status headers.
    const r = await browserFetch(`${api}/greet.GreetService/Greet`, "grpc", null);
    assert.equal(r.error, undefined);
    assert.equal(r.headers?.["grpc-status"], "12");
    assert.match(r.headers?.["grpc-message"] ?? "", /HTTP\/2/);
  });

  it("a disallowed origin: the browser's fetch fails, and the server says 403", async () => {
    const other = await context.newPage();
    try {
      await other.goto(`${otherOrigin}/`);
      const seen: Seen = await other.evaluate(async (url) => {
        try {
          const res = await fetch(url, { method: "POST", body: '{"name":"triple"}', headers: { "content-type": "application/json" } });
          return { status: res.status };
        } catch (e) {
          return { error: String(e) };
        }
      }, `${api}/greet.GreetService/Greet`);
      assert.match(seen.error ?? "", /TypeError|Failed to fetch/, JSON.stringify(seen));
    } finally {
      await other.close();
    }
    const pre = await post1(api, "/greet.GreetService/Greet", {
      method: "OPTIONS",
      headers: { origin: otherOrigin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    assert.equal(pre.status, 403);
    const direct = await post1(api, "/greet.GreetService/Greet", {
      headers: { origin: otherOrigin, "content-type": "application/json" },
      body: '{"name":"triple"}',
    });
    assert.equal(direct.status, 403);
    assert.equal(direct.json().code, "permission_denied");
    assert.equal(direct.headers["access-control-allow-origin"], undefined);
  });

  it("the preflight answer: 204, allowed headers and methods, max age", async () => {
    const r = await post1(api, "/greet.GreetService/Greet", {
      method: "OPTIONS",
      headers: {
        origin: allowedOrigin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, tri-protocol-version, tri-custom, grpc-timeout, authorization",
      },
    });
    assert.equal(r.status, 204);
    assert.equal(r.headers["access-control-allow-origin"], allowedOrigin);
    const allowed = String(r.headers["access-control-allow-headers"]).split(/\s*,\s*/);
    for (const h of ["content-type", "tri-protocol-version", "tri-custom", "grpc-timeout", "authorization"]) assert.ok(allowed.includes(h), h);
    assert.equal(r.headers["access-control-max-age"], "600");
  });
});
