import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createServer, Method, Service } from "../../src/index.js";
import { JSON_HEADERS, post1 } from "../helpers/http.js";

/**
 * What a readiness probe sees during `close()`: with `drainDelayMs`, health says NOT_SERVING on
 * new connections while calls are still served, then the listener closes; without it, the
 * listener closes at once and a probe's new connection is refused (as docs/operations.md says).
 */

@Service("ready.Echo")
class Echo {
  @Method()
  async ping(): Promise<string> {
    return "pong";
  }
}

const check = (url: string) => post1(url, "/grpc.health.v1.Health/Check", { headers: JSON_HEADERS, body: '{"service":""}' });

describe("readiness during shutdown", () => {
  it("drainDelayMs: NOT_SERVING on a new connection and calls still served, then the listener closes", async () => {
    const server = createServer({ services: [new Echo()], drainDelayMs: 400 });
    await server.listen({ port: 0, host: "127.0.0.1" });
    const url = server.url;
    assert.equal((await check(url)).json().status, "SERVING");
    const t0 = Date.now();
    const closed = server.close();
    const probe = await check(url);
    assert.equal(probe.status, 200);
    assert.equal(probe.json().status, "NOT_SERVING");
    const call = await post1(url, "/ready.Echo/ping", { headers: JSON_HEADERS, body: "[]" });
    assert.equal(call.status, 200, "traffic that still arrives is served");
    await closed;
    assert.ok(Date.now() - t0 >= 380, "close() waited for the delay");
    await assert.rejects(check(url), /ECONNREFUSED/);
  });

  it("without drainDelayMs the listener closes at once: a probe's new connection is refused", async () => {
    const server = createServer({ services: [new Echo()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    const url = server.url;
    const closed = server.close();
    await assert.rejects(check(url), /ECONNREFUSED/);
    await closed;
  });
});
