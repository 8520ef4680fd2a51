import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Client, closeClient, createClient, type LoadBalancerName, type ProviderInit } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type GrpcJsServer, startGrpcJsServer } from "./grpc-js-server.js";

const CALLS = 1000;

describe("load balancers over 1,000 calls to three real servers", () => {
  const servers: GrpcJsServer[] = [];
  const clients: object[] = [];
  before(async () => {
    for (let i = 0; i < 3; i++) servers.push(await startGrpcJsServer({ accepted: "lb" }));
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await Promise.all(servers.map((s) => s.close()));
  });

  async function distribution(
    loadBalance: LoadBalancerName,
    providers: ProviderInit[] = servers.map((s) => s.address),
    call: (c: Client<GreetServiceImpl>, i: number) => Promise<unknown> = (c) => c.greet({ name: "lb" }),
    parallel = 1,
  ): Promise<number[]> {
    const c = createClient(GreetServiceImpl, { providers, protocol: "grpc", loadBalance, retries: 0 });
    clients.push(c);
    const before = servers.map((s) => s.calls.Greet);
    for (let i = 0; i < CALLS; i += parallel) {
      await Promise.all(Array.from({ length: parallel }, (_, k) => call(c, i + k)));
    }
    return servers.map((s, i) => s.calls.Greet - before[i]);
  }

  const within = (counts: number[], lo: number, hi: number) => {
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      CALLS,
    );
    for (const n of counts) assert.ok(n >= lo && n <= hi, `${counts.join("/")} not within ${lo}..${hi}`);
  };

  it("random (default): uniform for equal weights", async () => {
    within(await distribution("random"), 250, 420);
  });

  it("random: weighted 1:1:2", async () => {
    const counts = await distribution(
      "random",
      servers.map((s, i) => ({ url: s.address, weight: i === 2 ? 200 : 100 })),
    );
    assert.equal(counts[0] + counts[1] + counts[2], CALLS);
    for (const n of counts.slice(0, 2)) assert.ok(n >= 170 && n <= 330, counts.join("/"));
    assert.ok(counts[2] >= 420 && counts[2] <= 580, counts.join("/"));
  });

  it("roundrobin: exact thirds; weighted 1:2:3 exact sixths", async () => {
    within(await distribution("roundrobin"), 333, 334);
    const w = await distribution(
      "roundrobin",
      servers.map((s, i) => ({ url: s.address, weight: 100 * (i + 1) })),
    );
    assert.ok(Math.abs(w[0] - 167) <= 1 && Math.abs(w[1] - 333) <= 1 && Math.abs(w[2] - 500) <= 1, w.join("/"));
  });

  it("leastactive: spread evenly when calls do not overlap, and with 8 in flight", async () => {
    within(await distribution("leastactive"), 250, 420);
    within(await distribution("leastactive", undefined, undefined, 8), 200, 470);
  });

  it("p2c: spread evenly, sequential and with 8 in flight", async () => {
    within(await distribution("p2c"), 250, 420);
    within(await distribution("p2c", undefined, undefined, 8), 200, 470);
  });

  it("consistenthash: one key always hits one provider; many keys spread", async () => {
    const same = await distribution("consistenthash", undefined, (c) => c.greet({ name: "lb" }));
    assert.equal(same.filter((n) => n > 0).length, 1, same.join("/"));
    // The server rejects other names, which is fine: the request still reached a provider.
    const spread = await distribution("consistenthash", undefined, (c, i) => c.greet({ name: `key-${i}` }).catch(() => undefined));
    within(spread, 150, 550);
  });
});
