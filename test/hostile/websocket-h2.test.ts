import * as assert from "node:assert/strict";
import type * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { h2wsCall, settledSession } from "../websocket/h2-helpers.js";
import { Bystander } from "./attack.js";

/**
 * Triple over WebSocket on HTTP/2 extended CONNECT (RFC 8441) under attack: a flood of CONNECT
 * streams past `maxConcurrentStreams` whose WebSockets never send a message nor close, and a
 * flood of CONNECTs the server refuses. Each WebSocket stream is a call: at most
 * `maxConcurrentStreams` per connection at once, every silent one closed 1008 after
 * `bodyIdleTimeoutMs`, refused ones leave nothing behind; a bystander (HTTP/1.1 and HTTP/2
 * greets) is not disturbed. Each test is bounded in time.
 */

const BOUNDED = { timeout: 15_000 };
const MAX_STREAMS = 16;
const IDLE_MS = 1_000;
const SESSIONS = 3;
const PER_SESSION = 40;

describe("hostile: Triple over WebSocket on HTTP/2 extended CONNECT", () => {
  let server: TripleServer;
  const sessions: http2.ClientHttp2Session[] = [];
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()], maxConcurrentStreams: MAX_STREAMS, bodyIdleTimeoutMs: IDLE_MS });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    for (const s of sessions) s.destroy();
    await server.close();
  });

  it("never-closing silent WebSocket streams past maxConcurrentStreams: at most that many per connection, each closed 1008", BOUNDED, async () => {
    const by = new Bystander(server.url);
    for (let i = 0; i < SESSIONS; i++) sessions.push(await settledSession(server.url));
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, server.inflightCount);
    }, 20);
    const t = performance.now();
    const calls = sessions.flatMap((s) =>
      Array.from({ length: PER_SESSION }, () => h2wsCall(s, "/greet.GreetService/GreetStream", [], { end: "none", timeoutMs: 12_000 })),
    );
    const outcomes = await Promise.all(calls);
    clearInterval(sampler);
    const ms = Math.round(performance.now() - t);
    const codes = new Map<number, number>();
    for (const o of outcomes) codes.set(o.status ?? o.code, (codes.get(o.status ?? o.code) ?? 0) + 1);
    assert.deepEqual([...codes], [[1008, SESSIONS * PER_SESSION]], `outcomes: ${JSON.stringify([...codes])}`);
    assert.ok(peak <= SESSIONS * MAX_STREAMS, `${peak} WebSocket calls at once over ${SESSIONS} connections (bound ${SESSIONS * MAX_STREAMS})`);
    assert.equal(server.inflightCount, 0);
    const report = await by.assertResponsive(3_000);
    console.log(
      `# ${SESSIONS * PER_SESSION} silent streams closed 1008 in ${ms} ms; peak ${peak} calls at once; bystander ${report.calls} calls, slowest ${report.maxMs} ms`,
    );
  });

  it("a flood of refused CONNECTs (unknown method, version 8) leaves no call nor stream behind", BOUNDED, async () => {
    const by = new Bystander(server.url);
    const s = await settledSession(server.url);
    sessions.push(s);
    const rss0 = process.memoryUsage().rss;
    const t = performance.now();
    const n = 600;
    const statuses = new Map<number, number>();
    for (let i = 0; i < n; i += 50) {
      const batch = Array.from({ length: 50 }, (_, j) =>
        (i + j) % 2
          ? h2wsCall(s, "/greet.GreetService/NoSuchMethod", [], { end: "none" })
          : h2wsCall(s, "/greet.GreetService/GreetStream", [], { end: "none", headers: { "sec-websocket-version": "8" } }),
      );
      for (const o of await Promise.all(batch)) statuses.set(o.status ?? o.code, (statuses.get(o.status ?? o.code) ?? 0) + 1);
    }
    const ms = Math.round(performance.now() - t);
    assert.equal(statuses.get(1000) ?? 0, 0, `an invalid CONNECT opened a WebSocket: ${JSON.stringify([...statuses])}`);
    assert.equal((statuses.get(404) ?? 0) + (statuses.get(400) ?? 0), n, JSON.stringify([...statuses]));
    assert.equal(server.inflightCount, 0);
    const report = await by.assertResponsive(3_000);
    const rss = Math.round((process.memoryUsage().rss - rss0) / 2 ** 20);
    console.log(
      `# ${n} refused CONNECTs in ${ms} ms (${JSON.stringify([...statuses])}); RSS +${rss} MiB; bystander ${report.calls} calls, slowest ${report.maxMs} ms`,
    );
  });
});
