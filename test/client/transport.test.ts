import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient, Method, Service } from "../../src/index.js";
import { startHttp1, startHttp2 } from "./raw-servers.js";
import { waitFor } from "../helpers/wait.js";

@Service("t.Svc")
class Svc {
  @Method() async ping(): Promise<string> {
    return "";
  }
}

describe("client transports: connection reuse, GOAWAY, dropped connections, keepalive", () => {
  const clients: object[] = [];
  const make = (url: string, extra: Partial<Parameters<typeof createClient>[1]> = {}) => {
    const c = createClient(Svc, { providers: [url], ...extra });
    clients.push(c);
    return c;
  };
  let h1: Awaited<ReturnType<typeof startHttp1>>;
  let h2: Awaited<ReturnType<typeof startHttp2>>;
  before(async () => {
    h1 = await startHttp1({});
    h2 = await startHttp2();
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await h1.close();
    await h2.close();
  });

  it("HTTP/1.1 reuses one keep-alive connection for consecutive calls", async () => {
    const c = make(h1.url, { httpVersion: "1.1" });
    const before = h1.connections();
    for (let i = 0; i < 10; i++) assert.equal(await c.ping(), 0);
    assert.equal(h1.connections() - before, 1);
  });

  it("HTTP/2 shares one session per provider between all calls, also in parallel", async () => {
    const c = make(h2.url);
    const before = h2.sessions.length;
    await Promise.all(Array.from({ length: 20 }, () => c.ping()));
    for (let i = 0; i < 5; i++) await c.ping();
    assert.equal(h2.sessions.length - before, 1);
  });

  it("after a GOAWAY the next call opens a new session", async () => {
    const c = make(h2.url);
    await c.ping();
    const n = h2.sessions.length;
    h2.sessions[n - 1].goaway();
    await new Promise((r) => setTimeout(r, 50));
    assert.match(await c.ping(), /^ok /);
    assert.equal(h2.sessions.length, n + 1);
  });

  it("after a dropped connection the next call reconnects", async () => {
    const c = make(h2.url);
    await c.ping();
    const n = h2.sessions.length;
    h2.sessions[n - 1].destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.match(await c.ping(), /^ok /);
    assert.equal(h2.sessions.length, n + 1);
  });

  it("keepalive pings the session", async () => {
    const c = make(h2.url, { keepaliveMs: 40 });
    await c.ping();
    const before = h2.pings();
    await waitFor(() => h2.pings() - before >= 2, 5000, "two keepalive pings");
  });
});
