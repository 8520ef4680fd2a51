import * as assert from "node:assert/strict";
import * as net from "node:net";
import { after, before, describe, it } from "node:test";
import { post1 } from "../helpers/http.js";
import { ServerChild, whileGreeting } from "./child.js";
import { FrameType, frame, PREFACE } from "./raw-h2.js";

/** Short server timeouts so stalled connections are seen to be cut within the test. */
const HEADERS_TIMEOUT = 1000;
const REQUEST_TIMEOUT = 2000;
const IDLE_TIMEOUT = 3000;
/** Slack for timers and the connection sweep (a quarter of the shortest timeout). */
const SLACK = 1500;

interface RawResult {
  /** Everything the server sent. */
  data: string;
  /** ms from connect to the server closing the connection (Infinity: still open at the deadline). */
  closedAfter: number;
}

/** Connects, writes `chunks` (with `gapMs` between them) and waits for the server to close, at most `waitMs`. */
function raw(port: number, chunks: ReadonlyArray<string | Buffer>, waitMs: number, gapMs = 0, endAfterWrite = false): Promise<RawResult> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let data = "";
    let done = false;
    const c = net.connect(port, "127.0.0.1");
    const finish = (closedAfter: number) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      c.destroy();
      resolve({ data, closedAfter });
    };
    const deadline = setTimeout(() => finish(Number.POSITIVE_INFINITY), waitMs);
    c.on("data", (d: Buffer) => {
      data += d.toString("latin1");
    });
    c.on("error", () => {});
    c.on("close", () => finish(Date.now() - t0));
    c.on("connect", async () => {
      for (const ch of chunks) {
        if (c.destroyed) return;
        c.write(ch);
        if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
      }
      if (endAfterWrite) c.end();
    });
  });
}

/** mulberry32: a small seeded PRNG, so a failing random-bytes run can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GREET_H1 = "POST /greet.GreetService/Greet HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";

describe("robustness: raw sockets, half-open and slow connections", () => {
  let server: ServerChild;

  before(async () => {
    server = await ServerChild.start({ headersTimeoutMs: HEADERS_TIMEOUT, requestTimeoutMs: REQUEST_TIMEOUT, idleTimeoutMs: IDLE_TIMEOUT });
  });
  after(async () => {
    await server.stop();
  });

  it("a connection that never sends a byte is closed after headersTimeout", async () => {
    const r = await raw(server.port, [], HEADERS_TIMEOUT + SLACK + 2000);
    assert.ok(r.closedAfter >= HEADERS_TIMEOUT - 100 && r.closedAfter <= HEADERS_TIMEOUT + SLACK, `closed after ${r.closedAfter} ms`);
  });

  it("half a preface, then silence → closed after headersTimeout", async () => {
    const r = await raw(server.port, ["PRI * HTTP/2"], HEADERS_TIMEOUT + SLACK + 2000);
    assert.ok(r.closedAfter <= HEADERS_TIMEOUT + SLACK, `closed after ${r.closedAfter} ms`);
  });

  it("half the request headers, then silence → 408 with a JSON body, closed after headersTimeout", async () => {
    const r = await raw(server.port, [`${GREET_H1}X-Partial: `], HEADERS_TIMEOUT + SLACK + 3000);
    assert.ok(r.closedAfter <= HEADERS_TIMEOUT + SLACK, `closed after ${r.closedAfter} ms`);
    assert.match(r.data, /^HTTP\/1\.1 408 /);
    assert.match(r.data, /"code":"deadline_exceeded"/);
  });

  it("slowloris: one header byte every 200 ms does not extend headersTimeout", async () => {
    const drip = [...`${GREET_H1}X-Slow: ${"a".repeat(40)}`];
    const r = await raw(server.port, drip, HEADERS_TIMEOUT + SLACK + 4000, 200);
    assert.ok(r.closedAfter <= HEADERS_TIMEOUT + SLACK, `closed after ${r.closedAfter} ms`);
  });

  it("headers complete but half the body, then silence → closed after requestTimeout", async () => {
    const r = await raw(server.port, [`${GREET_H1}Content-Length: 100\r\n\r\n{"na`], REQUEST_TIMEOUT + SLACK + 3000);
    assert.ok(r.closedAfter >= REQUEST_TIMEOUT - 100 && r.closedAfter <= REQUEST_TIMEOUT + SLACK, `closed after ${r.closedAfter} ms`);
  });

  it("HTTP/2: a stream whose body never comes is cut by the idle timeout", async () => {
    const r = await raw(server.port, [PREFACE, frame(FrameType.SETTINGS, 0, 0)], IDLE_TIMEOUT + SLACK + 3000);
    assert.ok(r.closedAfter <= IDLE_TIMEOUT + SLACK, `closed after ${r.closedAfter} ms`);
  });

  it("50 slowloris connections at once do not stop well-formed calls, and all are cut", async () => {
    const results = await whileGreeting(server.url, () =>
      Promise.all(Array.from({ length: 50 }, () => raw(server.port, [...GREET_H1], HEADERS_TIMEOUT + SLACK + 4000, 100))),
    );
    for (const r of results) assert.ok(r.closedAfter <= HEADERS_TIMEOUT + SLACK, `closed after ${r.closedAfter} ms`);
    await server.assertHealthy();
  });

  it("a complete request followed by a half-close (FIN) still gets its response", async () => {
    const body = '{"name":"triple"}';
    const r = await raw(server.port, [`${GREET_H1}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`], 3000, 0, true);
    assert.match(r.data, /^HTTP\/1\.1 200 /);
    assert.match(r.data, /"greeting":"triple"/);
  });

  it("431 for too many or too large HTTP/1.1 headers", async () => {
    const many: Record<string, string> = { "content-type": "application/json" };
    for (let i = 0; i < 150; i++) many[`x-h${i}`] = "v";
    const r1 = await post1(server.url, "/greet.GreetService/Greet", { headers: many, body: '{"name":"triple"}' });
    assert.equal(r1.status, 431);
    assert.equal(r1.json().code, "resource_exhausted");
    const r2 = await post1(server.url, "/greet.GreetService/Greet", {
      headers: { "content-type": "application/json", "x-big": "a".repeat(20_000) },
      body: '{"name":"triple"}',
    }).catch((e: Error) => e);
    assert.ok(!(r2 instanceof Error), `connection failed instead of 431: ${r2}`);
    assert.equal(r2.status, 431);
    assert.equal(r2.json().code, "resource_exhausted");
  });

  it("random bytes on raw sockets (seeded, 300 connections) never hurt the server", async () => {
    const seed = Number(process.env.ROBUST_SEED ?? 0x5eed);
    const rnd = prng(seed);
    const prefixes = [Buffer.alloc(0), PREFACE, Buffer.from(GREET_H1), Buffer.concat([PREFACE, frame(FrameType.SETTINGS, 0, 0)])];
    const one = () => {
      const len = 1 + Math.floor(rnd() * 4096);
      const bytes = Buffer.alloc(len);
      for (let i = 0; i < len; i++) bytes[i] = Math.floor(rnd() * 256);
      const prefix = prefixes[Math.floor(rnd() * prefixes.length)];
      return raw(server.port, [Buffer.concat([prefix, bytes])], 400);
    };
    await whileGreeting(server.url, async () => {
      for (let batch = 0; batch < 15; batch++) await Promise.all(Array.from({ length: 20 }, one));
    });
    await server.assertHealthy();
  });

  it("the server survived every connection", async () => {
    await server.assertHealthy();
  });
});
