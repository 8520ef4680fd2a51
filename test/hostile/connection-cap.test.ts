import * as assert from "node:assert/strict";
import * as net from "node:net";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import type { Logger } from "../../src/runtime/logger.js";
import { CalcService } from "../server/fixtures.js";

// Issue 22 break 3, second half: a connection flood must degrade into refusals, not fd
// exhaustion. Caps on open connections, in total and per remote address; the connection past a
// cap is closed at accept, counted, and logged at most once per interval, when every connection
// carries a call (since issue 33 an idle one is closed to make room instead: idle-connections.test.ts).

const REQUEST = "POST /test.Calc/add HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n[1,2]";
/** A call that takes 1.5 s: the connection carries a request meanwhile. */
const SLOW = "POST /test.Calc/slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 6\r\n\r\n[1500]";

/** A keep-alive HTTP/1.1 connection from `localAddress`. */
class Conn {
  closed = false;
  private data = "";
  private constructor(readonly socket: net.Socket) {
    socket.on("data", (c: Buffer) => {
      this.data += c.toString();
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      this.closed = true;
    });
  }

  static open(port: number, localAddress: string): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host: "127.0.0.1", localAddress }, () => resolve(new Conn(s)));
      s.once("error", reject);
    });
  }

  /** Sends one call; resolves with its answer's body, or undefined when the socket closed first. */
  async call(ms = 2_000): Promise<string | undefined> {
    this.data = "";
    if (!this.closed) this.socket.write(REQUEST);
    const end = Date.now() + ms;
    while (!this.closed && !/\r\n\r\n[\s\S]*3/.test(this.data) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    return this.closed ? undefined : this.data;
  }

  /** Sends the slow call; resolves with whether it was answered (false when the socket closed first). */
  async slow(): Promise<boolean> {
    this.data = "";
    this.socket.write(SLOW);
    const end = Date.now() + 5_000;
    while (!this.closed && !/"done"/.test(this.data) && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    return !this.closed && /"done"/.test(this.data);
  }

  /** Resolves with whether the server closed the connection within `ms`. */
  async closedWithin(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (!this.closed && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    return this.closed;
  }

  close(): Promise<void> {
    this.socket.end();
    return new Promise((r) => (this.closed ? r() : this.socket.once("close", () => r())));
  }
}

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return pred();
}

describe("hostile: connection caps (maxConnections, maxConnectionsPerPeer)", () => {
  let server: TripleServer;
  const warnings: string[] = [];
  const logger: Logger = { info() {}, warn: (_o, msg) => warnings.push(msg), error() {} };
  before(async () => {
    server = createServer({ services: [new CalcService()], maxConnections: 5, maxConnectionsPerPeer: 3, logger });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  it("per peer: the 4th connection from one address is closed at accept while the three carry calls; the others work; after a close one more is accepted", async () => {
    const { port } = server.address;
    const conns = await Promise.all([1, 2, 3].map(() => Conn.open(port, "127.0.0.1")));
    for (const c of conns) assert.match((await c.call()) ?? "closed", /HTTP\/1\.1 200[\s\S]*3$/);
    const busy = conns.map((c) => c.slow());
    assert.ok(await waitFor(() => server.inflightCount >= 3, 5_000), "the three slow calls are in flight");
    const fourth = await Conn.open(port, "127.0.0.1");
    assert.equal(await fourth.closedWithin(1_000), true, "the connection over the per-peer cap stayed open");
    assert.equal(await fourth.call(200), undefined);
    // Another address is not affected by this one's cap.
    const other = await Conn.open(port, "127.0.0.2");
    assert.match((await other.call()) ?? "closed", /200/);
    assert.deepEqual(await Promise.all(busy), [true, true, true], "a busy connection was closed");
    for (const c of conns) assert.match((await c.call()) ?? "closed", /200/, "an admitted connection stopped working");
    await conns[0].close();
    assert.ok(await waitFor(() => server.connections.open === 3, 1_000));
    const again = await Conn.open(port, "127.0.0.1");
    assert.match((await again.call()) ?? "closed", /200/, "a connection after a close was not accepted");
    await Promise.all([conns[1].close(), conns[2].close(), other.close(), again.close()]);
    assert.ok(await waitFor(() => server.connections.open === 0, 1_000));
  });

  it("in total: the 6th connection is closed at accept, whatever its address, while the five carry calls; refusals are counted and logged once", async () => {
    const { port } = server.address;
    const before = server.connections.refused;
    const conns = await Promise.all(["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2", "127.0.0.3"].map((a) => Conn.open(port, a)));
    for (const c of conns) assert.match((await c.call()) ?? "closed", /200/);
    const busy = conns.map((c) => c.slow());
    assert.ok(await waitFor(() => server.inflightCount >= 5, 5_000), "the five slow calls are in flight");
    const sixth = await Conn.open(port, "127.0.0.4").catch(() => undefined);
    assert.ok(!sixth || (await sixth.closedWithin(1_000)), "the connection over the total cap stayed open");
    const seventh = await Conn.open(port, "127.0.0.5").catch(() => undefined);
    assert.ok(!seventh || (await seventh.closedWithin(1_000)));
    assert.ok(await waitFor(() => server.connections.refused >= before + 2, 1_000), `refused: ${server.connections.refused}`);
    assert.deepEqual(await Promise.all(busy), [true, true, true, true, true], "a busy connection was closed");
    assert.equal(server.connections.evicted, 0);
    for (const c of conns) assert.match((await c.call()) ?? "closed", /200/);
    await Promise.all(conns.map((c) => c.close()));
    assert.ok(await waitFor(() => server.connections.open === 0, 1_000));
    const fresh = await Conn.open(port, "127.0.0.4");
    assert.match((await fresh.call()) ?? "closed", /200/, "new connections are accepted again after closes");
    await fresh.close();
    // Three refusals in this suite, one log line (at most one per minute).
    assert.equal(warnings.filter((w) => /refusing new connections/.test(w)).length, 1, warnings.join("\n"));
  });

  it("options have safe defaults: 1000 per peer, at most 10 000 in total", () => {
    const s = createServer({ services: [] }) as unknown as { listener: { connections: unknown; guard: { maxConnections: number; maxPerPeer: number } } };
    assert.equal(s.listener.guard.maxPerPeer, 1000);
    assert.ok(s.listener.guard.maxConnections <= 10_000 && s.listener.guard.maxConnections >= 64);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => createServer({ maxConnectionsPerPeer: bad }), /maxConnectionsPerPeer must be a whole number >= 1/);
      assert.throws(() => createServer({ maxConnections: bad }), /maxConnections must be a whole number >= 1/);
    }
  });
});
