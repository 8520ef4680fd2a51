import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import * as net from "node:net";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";
import { CalcService } from "./fixtures.js";

const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/** Writes raw bytes on a fresh connection; resolves with everything the server sent before closing. */
/** How many raw() connections the test's own 3 s timer closed (the server closed the others). */
let closedByTimer = 0;

function raw(port: number, ...writes: (string | Buffer)[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    sock.on("data", (d) => chunks.push(d));
    sock.on("error", reject);
    sock.on("close", () => resolve(Buffer.concat(chunks)));
    sock.on("connect", async () => {
      for (const w of writes) {
        sock.write(w);
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    setTimeout(() => {
      if (!sock.destroyed) closedByTimer++;
      sock.destroy();
    }, 3000).unref();
  });
}

describe("one port for HTTP/1.1 and HTTP/2 (issue 2 item 2) and hostile connections", () => {
  let server: TripleServer;
  let port: number;
  before(async () => {
    server = createServer({ services: [new CalcService()], headersTimeoutMs: 500 });
    port = (await server.listen({ port: 0 })).port;
  });
  after(() => server.close());

  const assertAlive = async () => {
    const a = await post1(server.url, "/test.Calc/add", { headers: JSON_HEADERS, body: "[1,2]" });
    assert.equal(a.json(), 3);
    const h2 = new H2(server.url);
    try {
      assert.equal((await h2.request("/test.Calc/add", { headers: JSON_HEADERS, body: "[3,4]" })).json(), 7);
    } finally {
      h2.close();
    }
  };

  it("serves HTTP/1.1 and h2c prior knowledge on the same port", async () => {
    const a = await post1(server.url, "/test.Calc/add", { headers: JSON_HEADERS, body: "[1,1]" });
    assert.equal(a.status, 200);
    const session = http2.connect(server.url);
    const answered = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const s = session.request({ ":method": "POST", ":path": "/test.Calc/add", ...JSON_HEADERS });
      let status = 0;
      let body = "";
      s.on("response", (h) => (status = Number(h[":status"])));
      s.setEncoding("utf8");
      s.on("data", (d) => (body += d));
      s.on("end", () => resolve({ status, body }));
      s.on("error", reject);
      s.end("[2,2]");
    });
    assert.deepEqual(answered, { status: 200, body: "4" });
    assert.equal(session.alpnProtocol, "h2c");
    session.close();
  });

  it("fetch (undici, HTTP/1.1) works", async () => {
    const r = await fetch(`${server.url}/test.Calc/add`, { method: "POST", headers: JSON_HEADERS, body: "[5,5]" });
    assert.equal(r.status, 200);
    assert.equal(await r.json(), 10);
  });

  it("a preface split into one-byte writes is still HTTP/2", async () => {
    const sock = net.connect(port, "127.0.0.1");
    await new Promise((r) => sock.once("connect", r));
    for (const ch of PREFACE) {
      sock.write(ch);
      await new Promise((r) => setImmediate(r));
    }
    // Our empty SETTINGS frame; the server answers with its SETTINGS (type 4) first.
    sock.write(Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]));
    const first = await new Promise<Buffer>((r) => sock.once("data", r));
    assert.equal(first[3], 4, "server SETTINGS frame");
    sock.destroy();
  });

  it("garbage instead of a preface gets HTTP/1.1 400 and a closed connection", async () => {
    const out = (await raw(port, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x01, 0x00, 0x00]), "\r\n\r\n")).toString();
    assert.match(out, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(out, /Content-Type: application\/json/);
    assert.match(out, /"code":"invalid_argument"/);
    await assertAlive();
  });

  it("a broken preface (right start, wrong end) is rejected as HTTP/1.1", async () => {
    const out = (await raw(port, "PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n")).toString();
    assert.match(out, /^HTTP\/1\.1 (400|505) /);
    await assertAlive();
  });

  it("a valid preface followed by garbage frames ends in GOAWAY, not a crash", async () => {
    const out = await raw(port, PREFACE, Buffer.alloc(64, 0xee));
    // Somewhere in what the server sent is a GOAWAY frame (type 7).
    let sawGoaway = false;
    for (let i = 0; i + 9 <= out.length; ) {
      const len = out.readUIntBE(i, 3);
      if (out[i + 3] === 7) sawGoaway = true;
      i += 9 + len;
    }
    assert.ok(sawGoaway, "GOAWAY sent");
    await assertAlive();
  });

  it("a connection that sends nothing, or half a preface, is closed after the headers timeout", async () => {
    const timerBefore = closedByTimer;
    const silent = await raw(port);
    const half = await raw(port, "PRI * HTTP/2");
    assert.equal(silent.length, 0);
    assert.equal(half.length, 0);
    // A count, not a time: neither was closed by raw()'s own 3 s timer.
    assert.equal(closedByTimer, timerBefore, "closed by the server, not by the test's own timer");
    await assertAlive();
  });

  it("an HTTP/1.1 request with too many headers is 431", async () => {
    const headers: Record<string, string> = { ...JSON_HEADERS };
    for (let i = 0; i < 120; i++) headers[`x-h${i}`] = "v";
    const r = await post1(server.url, "/test.Calc/add", { headers, body: "[1,2]" });
    assert.equal(r.status, 431);
    assert.equal(r.json().code, "resource_exhausted");
    const h2 = new H2(server.url);
    try {
      const r2 = await h2.request("/test.Calc/add", { headers, body: "[1,2]" });
      assert.equal(r2.status, 431);
    } finally {
      h2.close();
    }
  });

  it("an HTTP/2 client resetting its stream mid-body leaves the session and server working", async () => {
    const h2 = new H2(server.url);
    try {
      const s = h2.session.request({ ":method": "POST", ":path": "/test.Calc/size", ...JSON_HEADERS });
      s.on("error", () => {});
      s.write('["abc');
      await new Promise((r) => setTimeout(r, 20));
      s.close(http2.constants.NGHTTP2_CANCEL);
      const r = await h2.request("/test.Calc/add", { headers: JSON_HEADERS, body: "[1,2]" });
      assert.equal(r.json(), 3);
    } finally {
      h2.close();
    }
    assert.equal(server.inflightCount, 0);
  });

  it("HTTP/1.1 pipelined requests on one connection are all answered in order", async () => {
    const req = (body: string) => `POST /test.Calc/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const out = (await raw(port, [req("[1,1]"), req("[1"), req("[2,2]"), "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"].join(""))).toString();
    const statuses = [...out.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    assert.deepEqual(statuses, ["200", "400", "200", "405"]);
  });
});
