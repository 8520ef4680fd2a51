import * as assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type Interceptor, type TripleServer } from "../../src/index.js";
import { CHROMIUM, CHROMIUM_ARGS } from "../helpers/chromium.js";
import { selfSigned } from "../helpers/tls.js";

/** What the page saw: the unary fetch's answer, the WebSocket's messages and close. */
interface PageResult {
  unary: string;
  messages: string[];
  code: number;
  protocol: string;
}

/**
 * Chromium opens its WebSockets over HTTP/2 (RFC 8441) when it has an HTTP/2 connection to the
 * origin whose server advertised SETTINGS_ENABLE_CONNECT_PROTOCOL: a page of our TLS server
 * (ALPN h2, a self-signed certificate, `--ignore-certificate-errors`) fetches a unary call, then
 * opens a bidi WebSocket call; the server sees both calls over HTTP/2 from the same peer port,
 * i.e. on one connection.
 */
describe("Chromium's WebSocket over HTTP/2 extended CONNECT", {
  skip: !existsSync(CHROMIUM) && !process.env.CI ? `${CHROMIUM} not installed (apt-get install chromium)` : false,
}, () => {
  let server: TripleServer;
  let browser: Browser;
  const seen: { protocol: string; httpVersion: string; port: number }[] = [];
  let result: PageResult;

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: CI must install Debian's chromium`);
    const { key, cert } = selfSigned();
    const record: Interceptor = (next) => async (call) => {
      const c = call.context;
      seen.push({ protocol: c.protocol, httpVersion: c.httpVersion, port: c.peer.port });
      return next(call);
    };
    server = createServer({ services: [new GreetServiceImpl()], tls: { key, cert }, interceptors: [record] });
    await server.listen({ port: 0 });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS, "--ignore-certificate-errors"] });
    const page = await browser.newPage();
    // A page of the server's own origin (its 404 for this path is enough): the WebSocket is same-origin.
    await page.goto(`${server.url}/page`);
    result = await page.evaluate(async (url: string): Promise<PageResult> => {
      const r = await fetch(`${url}/greet.GreetService/Greet`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"triple"}' });
      const unary = await r.text();
      const ws = new WebSocket(`${url.replace("https", "wss")}/greet.GreetService/GreetStream`, ["triple"]);
      const messages: string[] = [];
      // Array buffers decode synchronously: every message is in before the close is seen.
      ws.binaryType = "arraybuffer";
      const text = new TextDecoder();
      ws.onmessage = (e) => messages.push(typeof e.data === "string" ? e.data : text.decode(e.data as ArrayBuffer));
      ws.onopen = () => {
        for (const n of ["a", "b", "c"]) ws.send(JSON.stringify({ name: n }));
        ws.send("");
      };
      const code = await new Promise<number>((resolve) => {
        ws.onclose = (e) => resolve(e.code);
      });
      return { unary, messages, code, protocol: ws.protocol };
    }, server.url);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it("the bidi call succeeds: three messages, close 1000, subprotocol triple", () => {
    assert.equal(result.unary, '{"greeting":"triple"}');
    assert.deepEqual(
      result.messages.map((m) => JSON.parse(m).greeting),
      ["a", "b", "c"],
    );
    assert.equal(result.code, 1000);
    assert.equal(result.protocol, "triple");
  });

  it("the server saw the WebSocket call as an HTTP/2 CONNECT stream on the page's connection", () => {
    const unary = seen.find((s) => s.protocol === "triple");
    const ws = seen.find((s) => s.protocol === "triple-websocket");
    assert.ok(unary && ws, JSON.stringify(seen));
    assert.equal(unary.httpVersion, "2");
    assert.equal(ws.httpVersion, "2");
    assert.equal(ws.port, unary.port, `the fetch came from port ${unary.port}, the WebSocket from ${ws.port}: not one connection`);
  });
});
