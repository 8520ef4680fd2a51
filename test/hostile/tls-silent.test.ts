import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import * as net from "node:net";
import * as tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { selfSigned } from "../helpers/tls.js";
import { CalcService } from "../server/fixtures.js";

// Issue 22, lower finding: on the TLS port, connections that sent nothing were all still open
// after 40 s, although `headersTimeoutMs` cuts them on cleartext; a handshake that never
// completes must be cut too. Here headersTimeoutMs is 500 ms.

const LIMIT_MS = 500;
/** Handshake window plus silence window, with margin for a busy machine. */
const WITHIN_MS = 3 * LIMIT_MS + 1_000;

function closedWithin(socket: net.Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, ms);
    socket.on("error", () => {});
    socket.resume(); // a paused socket would never see the server's FIN
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function handshake(port: number, alpn: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, ALPNProtocols: [alpn] }, () => resolve(s));
    s.once("error", reject);
  });
}

describe("hostile: silent TLS connections are closed at headersTimeoutMs", () => {
  let server: TripleServer;
  before(async () => {
    const { key, cert } = selfSigned();
    server = createServer({ services: [new CalcService()], tls: { key, cert }, headersTimeoutMs: LIMIT_MS, idleTimeoutMs: 60_000 });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("a TCP connection that never starts the handshake", async () => {
    const s = net.connect(server.address.port, "127.0.0.1");
    assert.equal(await closedWithin(s, WITHIN_MS), true);
  });

  it("a handshake that never completes (half a ClientHello record)", async () => {
    const s = net.connect(server.address.port, "127.0.0.1", () => s.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])));
    assert.equal(await closedWithin(s, WITHIN_MS), true);
  });

  for (const alpn of ["h2", "http/1.1"]) {
    it(`a completed handshake (ALPN ${alpn}) followed by silence`, async () => {
      const s = await handshake(server.address.port, alpn);
      const t0 = Date.now();
      assert.equal(await closedWithin(s, WITHIN_MS), true, "still open");
      assert.ok(Date.now() - t0 >= LIMIT_MS - 100, "closed before the limit");
    });
  }

  it("an HTTP/2 session that spoke in time is kept past the limit", async () => {
    const session = http2.connect(server.url, { rejectUnauthorized: false });
    session.on("error", () => {});
    const call = () =>
      new Promise<string>((resolve, reject) => {
        const req = session.request({ ":method": "POST", ":path": "/test.Calc/add", "content-type": "application/json" });
        let body = "";
        req.on("data", (c: Buffer) => {
          body += c.toString();
        });
        req.on("end", () => resolve(body));
        req.on("error", reject);
        req.end("[1,2]");
      });
    try {
      assert.equal(await call(), "3");
      await new Promise((r) => setTimeout(r, LIMIT_MS * 3));
      assert.equal(session.closed || session.destroyed, false, "the session was closed by the silence timer");
      assert.equal(await call(), "3");
    } finally {
      session.close();
    }
  });

  it("a connection that sends its request in time is served, and kept alive past the limit", async () => {
    const s = await handshake(server.address.port, "http/1.1");
    let data = "";
    s.on("data", (c: Buffer) => {
      data += c.toString();
    });
    s.write("POST /test.Calc/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n[1,2]");
    await new Promise((r) => setTimeout(r, LIMIT_MS * 2));
    assert.match(data, /^HTTP\/1\.1 200/);
    assert.equal(s.destroyed, false, "a connection that spoke was closed by the silence timer");
    s.destroy();
  });
});

describe("headersTimeoutMs: 0 switches the silence timer off on TLS as on cleartext", () => {
  it("a TLS connection that speaks after 200 ms is served (before: every TLS connection was closed at once)", async () => {
    const { key, cert } = selfSigned();
    const server = createServer({ services: [new CalcService()], tls: { key, cert }, headersTimeoutMs: 0 });
    await server.listen({ port: 0 });
    try {
      for (const alpn of ["http/1.1", "h2"]) {
        const s = await handshake(server.address.port, alpn);
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(s.destroyed || s.readyState !== "open", false, `${alpn}: closed while silent`);
        s.destroy();
      }
      const s = await handshake(server.address.port, "http/1.1");
      let data = "";
      s.on("data", (c: Buffer) => {
        data += c.toString();
      });
      s.on("error", () => {});
      await new Promise((r) => setTimeout(r, 100));
      s.write("POST /test.Calc/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n[1,2]");
      for (let i = 0; i < 50 && !/\r\n\r\n3$/.test(data); i++) await new Promise((r) => setTimeout(r, 20));
      assert.match(data, /^HTTP\/1\.1 200/);
      s.destroy();
    } finally {
      await server.close();
    }
  });
});
