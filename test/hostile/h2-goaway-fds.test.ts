import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as net from "node:net";
import * as tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { selfSigned } from "../helpers/tls.js";
import { CalcService } from "../server/fixtures.js";
import { FLAG_ACK, FrameType, frame, PREFACE } from "../robustness/raw-h2.js";

// Issue 22 break 3: after a fatal HTTP/2 error (here a PING whose length is not 8 → GOAWAY
// FRAME_SIZE_ERROR) node stops reading the socket and never sees the peer close it, so every
// such connection kept its fd until the idle timeout. The server must close it itself.

/** Preface, SETTINGS, SETTINGS ack, then a 4-byte PING: a connection error (RFC 9113 §6.7). */
const ATTACK = Buffer.concat([PREFACE, frame(FrameType.SETTINGS, 0, 0), frame(FrameType.SETTINGS, FLAG_ACK, 0), frame(FrameType.PING, 0, 0, Buffer.alloc(4))]);

const N = 100;
/** How long the server has to close each connection (sweep ≤ 0.5 s + grace ≤ 1 s, with margin). */
const CLOSE_WITHIN_MS = 2_500;

function fdCount(): number {
  return fs.readdirSync("/proc/self/fd").length;
}

/** Sends the attack on `socket` once connected; resolves with whether the server closed it in time (the client never closes it). */
function closedByServer(connect: () => net.Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect();
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, ms);
    socket.on("error", () => {});
    socket.on("data", () => {});
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return pred();
}

describe("hostile: connections ended by a fatal HTTP/2 error are closed by the server (issue 22 break 3)", () => {
  let server: TripleServer;
  let tlsServer: TripleServer;
  before(async () => {
    const { key, cert } = selfSigned();
    // A long idle timeout: the test must not pass thanks to the idle sweep.
    server = createServer({ services: [new CalcService()], idleTimeoutMs: 60_000 });
    tlsServer = createServer({ services: [new CalcService()], idleTimeoutMs: 60_000, tls: { key, cert } });
    await server.listen({ port: 0 });
    await tlsServer.listen({ port: 0 });
  });
  after(async () => {
    await server.close();
    await tlsServer.close();
  });

  it(`h2c: ${N} connections sending a malformed PING are all closed within ${CLOSE_WITHIN_MS} ms, fds back to baseline`, async () => {
    const baseline = fdCount();
    const { port } = server.address;
    const results = await Promise.all(
      Array.from({ length: N }, () =>
        closedByServer(() => {
          const s = net.connect(port, "127.0.0.1", () => s.write(ATTACK));
          return s;
        }, CLOSE_WITHIN_MS),
      ),
    );
    assert.equal(results.filter((x) => !x).length, 0, "connections the server left open");
    assert.ok(await waitFor(() => server.connections.open === 0, 2_000), `server still holds ${server.connections.open} connections`);
    assert.ok(await waitFor(() => fdCount() <= baseline + 2, 2_000), `fds: ${fdCount()} vs baseline ${baseline}`);
  });

  it("h2 over TLS: the same attack, the same close", async () => {
    const { port } = tlsServer.address;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        closedByServer(() => {
          const s = tls.connect({ port, host: "127.0.0.1", rejectUnauthorized: false, ALPNProtocols: ["h2"] }, () => s.write(ATTACK));
          return s;
        }, CLOSE_WITHIN_MS),
      ),
    );
    assert.equal(results.filter((x) => !x).length, 0, "TLS connections the server left open");
    assert.ok(await waitFor(() => tlsServer.connections.open === 0, 2_000), `server still holds ${tlsServer.connections.open} connections`);
  });

  it("a well-behaved HTTP/2 connection next to the attack keeps working and is not closed", async () => {
    const { port } = server.address;
    const good = net.connect(port, "127.0.0.1");
    await new Promise((r) => good.once("connect", r));
    good.write(Buffer.concat([PREFACE, frame(FrameType.SETTINGS, 0, 0)]));
    let closed = false;
    good.on("close", () => {
      closed = true;
    });
    good.on("data", () => {});
    await closedByServer(() => {
      const s = net.connect(port, "127.0.0.1", () => s.write(ATTACK));
      return s;
    }, CLOSE_WITHIN_MS);
    await new Promise((r) => setTimeout(r, 1_200));
    assert.equal(closed, false, "the healthy connection was closed");
    good.destroy();
  });
});
