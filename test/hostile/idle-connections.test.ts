import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import * as net from "node:net";
import * as tls from "node:tls";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { selfSigned } from "../helpers/tls.js";
import { FLAG_ACK, FrameType, frame, RawH2 } from "../robustness/raw-h2.js";
import { Bystander } from "./attack.js";

// Issue 33, break 6: HTTP/2 connections that carry no request but send PINGs (which node:http2
// answers itself, so bytes kept moving) never reached `idleTimeoutMs`, and held the connection
// caps: 1,000 PING-only connections from each of 11 addresses held 9,998 of 10,000 slots, new
// connections from any address got 0 of 59. Now a connection without a request (no stream open,
// none opened) for `idleTimeoutMs` is closed whatever PINGs it sends (GOAWAY, then close), and a
// new connection past a cap takes the place of the connection idle the longest; only when none is
// idle is it refused.

/** A connection that never opens a stream: a PING (and now and then a SETTINGS) every 200 ms. */
class PingKeeper {
  private readonly timer: NodeJS.Timeout;
  private ticks = 0;
  private constructor(readonly raw: RawH2) {
    this.timer = setInterval(() => {
      this.ticks++;
      raw.write(this.ticks % 5 === 0 ? frame(FrameType.SETTINGS, 0, 0) : frame(FrameType.PING, 0, 0, Buffer.alloc(8)));
    }, 200);
    raw.socket.once("close", () => clearInterval(this.timer));
  }

  static async open(port: number, localAddress: string): Promise<PingKeeper> {
    return new PingKeeper(await RawH2.connect(port, true, localAddress));
  }

  get closed(): boolean {
    return this.raw.closed;
  }

  /** The server sent GOAWAY (NO_ERROR) before closing. */
  get goAway(): boolean {
    return this.raw.goAwayCode === 0;
  }

  /** The server answered PINGs (the connection was alive and pinging). */
  get pongs(): number {
    return this.raw.frames.filter((f) => f.type === FrameType.PING && (f.flags & FLAG_ACK) !== 0).length;
  }

  close(): void {
    clearInterval(this.timer);
    this.raw.socket.destroy();
  }
}

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return pred();
}

/** An HTTP/2 session whose connection comes from `localAddress` (a loopback address). */
function h2From(url: string, localAddress: string): http2.ClientHttp2Session {
  const { hostname, port } = new URL(url);
  return http2.connect(url, { createConnection: () => net.connect({ host: hostname, port: Number(port), localAddress }) });
}

/** One greet on a fresh HTTP/2 connection from `localAddress`: its status, or the error. */
function greetFrom(url: string, localAddress: string, body = '{"name":"triple"}', path = "/greet.GreetService/Greet"): Promise<string> {
  return new Promise((resolve) => {
    const session = h2From(url, localAddress);
    const done = (r: string) => {
      clearTimeout(timer);
      session.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done("no answer within 4 s"), 4_000);
    session.on("error", (e) => done(String(e)));
    session.on("close", () => done("connection closed"));
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
    let text = "";
    let status = 0;
    req.on("response", (h) => {
      status = Number(h[":status"]);
    });
    req.on("data", (c: Buffer) => {
      text += c.toString();
    });
    req.on("end", () => done(`${status} ${text}`));
    req.on("error", (e) => done(String(e)));
    req.end(body);
  });
}

describe("hostile: PING-kept HTTP/2 connections are idle (issue 33, break 6)", () => {
  const IDLE_MS = 1_000;
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()], idleTimeoutMs: IDLE_MS });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  it("20 connections that only send PINGs and SETTINGS: GOAWAY and closed after idleTimeoutMs; a call slower than it on a pinged connection is served", async () => {
    const bystander = new Bystander(server.url);
    const keepers = await Promise.all(Array.from({ length: 20 }, () => PingKeeper.open(server.address.port, "127.0.0.2")));
    // A slow call (1.5 × the idle time) on a connection the client pings meanwhile: not idle.
    const session = http2.connect(server.url);
    session.on("error", () => {});
    const pinger = setInterval(() => session.ping(() => {}), 200);
    const slow = new Promise<string>((resolve) => {
      const req = session.request({ ":method": "POST", ":path": "/greet.GreetService/GreetSlowly", "content-type": "application/json" });
      let text = "";
      req.on("data", (c: Buffer) => {
        text += c.toString();
      });
      req.on("end", () => resolve(text));
      req.on("error", (e) => resolve(String(e)));
      req.end(JSON.stringify({ name: "slow", delay_ms: IDLE_MS * 1.5 }));
    });
    try {
      const t = Date.now();
      // idle time + a sweep (≤ 250 ms here) + the close after GOAWAY, with margin; before: never.
      const allClosed = await waitFor(() => keepers.every((k) => k.closed), IDLE_MS + 4_000);
      const ms = Date.now() - t;
      const open = keepers.filter((k) => !k.closed).length;
      assert.ok(
        keepers.every((k) => k.pongs > 0),
        "the keepers' PINGs were not answered",
      );
      assert.equal(allClosed, true, `${open} of 20 PING-only connections still open after ${ms} ms`);
      assert.ok(ms >= IDLE_MS - 300, `closed after ${ms} ms, before the idle time`);
      assert.ok(
        keepers.every((k) => k.goAway),
        "a connection was closed without GOAWAY",
      );
      assert.equal(await slow, '{"greeting":"slow"}', "the slow call on a pinged connection was cut");
      await bystander.assertResponsive(2_000);
    } finally {
      for (const k of keepers) k.close();
      clearInterval(pinger);
      session.destroy();
      await bystander.stop();
    }
  });
});

describe("hostile: idle connections make room at the connection caps (issue 33, break 6)", () => {
  let server: TripleServer;
  before(async () => {
    // Long idle time: room must come from the caps, not from the idle sweep. The bystander uses
    // at most 2 connections at a time from 127.0.0.1.
    server = createServer({
      services: [new GreetServiceImpl()],
      idleTimeoutMs: 60_000,
      maxConnections: 9,
      maxConnectionsPerPeer: 3,
      logger: { info() {}, warn() {}, error() {} },
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  it("PING-kept connections hold the total cap: a new peer's connections close the longest idle ones (GOAWAY) and are served", async () => {
    const bystander = new Bystander(server.url);
    const { port } = server.address;
    const older = await Promise.all([1, 2, 3].map(() => PingKeeper.open(port, "127.0.0.2")));
    await new Promise((r) => setTimeout(r, 600)); // a sweep apart: these are idle longer
    const newer = await Promise.all([1, 2, 3].map(() => PingKeeper.open(port, "127.0.0.3")));
    await new Promise((r) => setTimeout(r, 300));
    try {
      const evicted = server.connections.evicted ?? 0;
      // 6 keepers + the bystander's ≤ 2 + 3 new ones > 9: before, the new peer was refused.
      const answers = await Promise.all([1, 2, 3].map(() => greetFrom(server.url, "127.0.0.4")));
      assert.deepEqual(answers, Array(3).fill('200 {"greeting":"triple"}'));
      assert.ok(server.connections.evicted > evicted, "no idle connection was closed");
      assert.ok(await waitFor(() => older.some((k) => k.closed), 2_000), "none of the longest idle connections was closed");
      assert.ok(
        older.filter((k) => k.closed).every((k) => k.goAway),
        "an evicted HTTP/2 connection got no GOAWAY",
      );
      assert.ok(newer.every((k) => !k.closed) || older.every((k) => k.closed), "a newer idle connection went before an older one");
      await bystander.assertResponsive(2_000);
    } finally {
      for (const k of [...older, ...newer]) k.close();
      await bystander.stop();
    }
  });

  it("per peer: the 4th connection from an address closes that address's longest idle one, not another's", async () => {
    const bystander = new Bystander(server.url);
    const { port } = server.address;
    const others = await Promise.all([1, 2].map(() => PingKeeper.open(port, "127.0.0.6")));
    const mine = [await PingKeeper.open(port, "127.0.0.5")];
    await new Promise((r) => setTimeout(r, 600));
    mine.push(...(await Promise.all([1, 2].map(() => PingKeeper.open(port, "127.0.0.5")))));
    await new Promise((r) => setTimeout(r, 300));
    try {
      assert.equal(await greetFrom(server.url, "127.0.0.5"), '200 {"greeting":"triple"}');
      assert.ok(await waitFor(() => mine[0].closed, 2_000), "the address's longest idle connection stayed");
      assert.ok(
        others.every((k) => !k.closed),
        "another address's connection was closed",
      );
      assert.ok(
        mine.slice(1).every((k) => !k.closed),
        "a newer connection went before the longest idle",
      );
      await bystander.assertResponsive(2_000);
    } finally {
      for (const k of [...others, ...mine]) k.close();
      await bystander.stop();
    }
  });

  it("HTTP/1.1 keep-alive connections idle between requests make room too", async () => {
    const { port } = server.address;
    const request = 'POST /greet.GreetService/Greet HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"name":"triple"}';
    const conns = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<{ socket: net.Socket; closed: () => boolean; answered: Promise<void> }>((resolve) => {
            let closed = false;
            const socket = new net.Socket();
            socket.on("error", () => {});
            socket.on("close", () => {
              closed = true;
            });
            const answered = new Promise<void>((r) => socket.once("data", () => r()));
            socket.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.7" }, () => {
              socket.write(request);
              resolve({ socket, closed: () => closed, answered });
            });
          }),
      ),
    );
    await Promise.all(conns.map((c) => c.answered));
    await new Promise((r) => setTimeout(r, 100));
    try {
      assert.equal(await greetFrom(server.url, "127.0.0.7"), '200 {"greeting":"triple"}');
      assert.ok(await waitFor(() => conns.some((c) => c.closed()), 1_000), "no idle keep-alive connection was closed");
    } finally {
      for (const c of conns) c.socket.destroy();
    }
  });

  it("when every connection carries a request, a new one past the cap is refused and the calls finish", async () => {
    const { port } = server.address;
    const sessions = [1, 2, 3].map(() => h2From(server.url, "127.0.0.8"));
    for (const s of sessions) s.on("error", () => {});
    const calls = sessions.map(
      (s) =>
        new Promise<string>((resolve) => {
          const req = s.request({ ":method": "POST", ":path": "/greet.GreetService/GreetSlowly", "content-type": "application/json" });
          let text = "";
          req.on("data", (c: Buffer) => {
            text += c.toString();
          });
          req.on("end", () => resolve(text));
          req.on("error", (e) => resolve(String(e)));
          req.end(JSON.stringify({ name: "busy", delay_ms: 1_000 }));
        }),
    );
    await new Promise((r) => setTimeout(r, 300));
    const refused = server.connections.refused;
    const fourth = await RawH2.connect(port, true, "127.0.0.8");
    try {
      assert.ok(await waitFor(() => fourth.closed, 1_000), "the connection past the cap stayed open");
      assert.equal(server.connections.refused, refused + 1);
      assert.deepEqual(await Promise.all(calls), Array(3).fill('{"greeting":"busy"}'));
    } finally {
      fourth.socket.destroy();
      for (const s of sessions) s.destroy();
    }
  });
});

describe("hostile: idle TLS connections make room too, and the count stays true (issue 33, break 6)", () => {
  let server: TripleServer;
  let ca: Buffer;
  before(async () => {
    const { key, cert } = selfSigned();
    ca = cert;
    server = createServer({
      services: [new GreetServiceImpl()],
      tls: { key, cert },
      idleTimeoutMs: 60_000,
      maxConnections: 3,
      logger: { info() {}, warn() {}, error() {} },
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  /** An HTTP/2 session over TLS from `localAddress`. */
  const tlsFrom = (localAddress: string) =>
    http2.connect(server.url, {
      createConnection: () =>
        tls.connect({
          socket: net.connect({ host: "127.0.0.1", port: server.address.port, localAddress }),
          ca,
          ALPNProtocols: ["h2"],
          servername: "127.0.0.1",
        }),
    });

  it("three idle h2 sessions over TLS hold maxConnections 3: a new peer is served, the longest idle closed; open counts the sockets", async () => {
    const idle = ["127.0.0.11", "127.0.0.12", "127.0.0.13"].map((a) => tlsFrom(a));
    const closed: boolean[] = idle.map(() => false);
    idle.forEach((s, i) => {
      s.on("error", () => {});
      s.on("close", () => {
        closed[i] = true;
      });
    });
    try {
      await Promise.all(idle.map((s) => new Promise((r) => s.once("connect", r))));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(server.connections.open, 3);
      const fresh = tlsFrom("127.0.0.14");
      fresh.on("error", () => {});
      const answer = await new Promise<string>((resolve) => {
        const req = fresh.request({ ":method": "POST", ":path": "/greet.GreetService/Greet", "content-type": "application/json" });
        let text = "";
        req.on("data", (c: Buffer) => {
          text += c.toString();
        });
        req.on("end", () => resolve(text));
        req.on("error", (e) => resolve(String(e)));
        req.end('{"name":"triple"}');
      });
      assert.equal(answer, '{"greeting":"triple"}');
      assert.ok(await waitFor(() => closed.some((c) => c), 2_000), "no idle TLS connection was closed");
      assert.equal(server.connections.evicted, 1);
      assert.ok(await waitFor(() => server.connections.open === 3, 2_000), `open: ${server.connections.open}`);
      fresh.destroy();
    } finally {
      for (const s of idle) s.destroy();
    }
    assert.ok(await waitFor(() => server.connections.open === 0, 2_000), `open after all closed: ${server.connections.open}`);
  });
});
