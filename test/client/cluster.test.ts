import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  clientProviders,
  closeClient,
  Code,
  createClient,
  createServer,
  FailoverError,
  RpcError,
  type ClientOptions,
  type TripleServer,
} from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type GrpcJsServer, startGrpcJsServer } from "./grpc-js-server.js";
import { collect } from "./services.js";
import { waitFor } from "../helpers/wait.js";
// A free port is one nothing listens on: connecting to it is refused.
import { freePort } from "../helpers/zookeeper.js";

describe("cluster: failover and the other policies", () => {
  const servers: TripleServer[] = [];
  const grpcServers: GrpcJsServer[] = [];
  const clients: object[] = [];
  let urls: string[] = [];
  const greet = (opts: Partial<ClientOptions> & Pick<ClientOptions, "providers">) => {
    const c = createClient(GreetServiceImpl, opts);
    clients.push(c);
    return c;
  };

  before(async () => {
    for (let i = 0; i < 3; i++) {
      const s = createServer({ services: [new GreetServiceImpl()] });
      await s.listen({ port: 0 });
      servers.push(s);
    }
    urls = servers.map((s) => s.url);
    for (let i = 0; i < 3; i++) grpcServers.push(await startGrpcJsServer());
  });
  after(async () => {
    for (const c of clients) closeClient(c);
    await Promise.all([...servers.map((s) => s.close()), ...grpcServers.map((s) => s.close())]);
  });

  it("failover across three providers of which two are down: the call succeeds, the down ones are skipped next time", async () => {
    const down = [await freePort(), await freePort()].map((p) => `127.0.0.1:${p}`);
    for (const httpVersion of ["1.1", "2"] as const) {
      // roundrobin makes the order deterministic: both down providers are tried first.
      const c = greet({ providers: [...down, urls[0]], loadBalance: "roundrobin", httpVersion });
      assert.deepEqual(await c.greet({ name: "triple" }), { greeting: "triple" });
      const state = () => clientProviders(c).map((p) => ({ address: p.address, down: p.isDown(), failures: p.failures }));
      assert.deepEqual(
        state().map((p) => [p.down, p.failures]),
        [
          [true, 1],
          [true, 1],
          [false, 0],
        ],
      );
      for (let i = 0; i < 20; i++) assert.deepEqual(await c.greet({ name: "triple" }), { greeting: "triple" });
      // Skipped: not one more connection attempt on either down provider.
      assert.deepEqual(
        state().map((p) => p.failures),
        [1, 1, 0],
      );
    }
    // With the default random balancer too: every call succeeds and a down provider costs at most one attempt.
    const r = greet({ providers: [...down, urls[1]] });
    for (let i = 0; i < 30; i++) assert.deepEqual(await r.greet({ name: "triple" }), { greeting: "triple" });
    for (const p of clientProviders(r).slice(0, 2)) assert.ok(p.failures <= 1, `${p.address} tried ${p.failures} times`);
  });

  it("a down provider is tried again after its back-off", async () => {
    const port = await freePort();
    // The back-off runs on the client's clock, moved by hand here instead of slept through.
    const clock = { t: Date.now(), now: () => clock.t };
    const c = greet({ providers: [`127.0.0.1:${port}`, urls[0]], loadBalance: "roundrobin", downBackoffMs: 100, clock });
    await c.greet({ name: "triple" });
    const [p0] = clientProviders(c);
    assert.ok(p0.isDown());
    const revived = createServer({ services: [new GreetServiceImpl()] });
    await revived.listen({ port });
    servers.push(revived);
    clock.t += 99;
    assert.ok(p0.isDown(), "1 ms before the back-off ends");
    clock.t += 1;
    assert.ok(!p0.isDown());
    for (let i = 0; i < 4; i++) await c.greet({ name: "triple" });
    assert.equal(p0.failures, 0, "the revived provider answered again");
  });

  it("the exact failover message after three failing attempts on three providers", async () => {
    const c = greet({ providers: urls, loadBalance: "roundrobin" });
    const err = (await c.greet({ name: "nobody" }).catch((e) => e)) as FailoverError;
    assert.ok(err instanceof FailoverError);
    assert.ok(err instanceof RpcError);
    const addrs = urls.map((u) => new URL(u).host);
    assert.equal(
      err.message,
      `Failed to invoke the method Greet in the service greet.GreetService. Tried 2 times (3 attempts) of the providers [${addrs.join(", ")}] (3/3) from the registry static on the consumer 127.0.0.1 using the triple-rpc version 0.1.0. Last error is unknown: name is not right: nobody`,
    );
    assert.equal(err.code, Code.Unknown);
    assert.equal(err.attempts, 3);
    assert.ok(err.cause instanceof RpcError);
    assert.equal((err.cause as RpcError).message, "name is not right: nobody");
  });

  it("the issue's example: one provider, three attempts on it", async () => {
    const c = greet({ providers: [urls[0]] });
    const err = (await c.greet({ name: "nobody" }).catch((e) => e)) as FailoverError;
    assert.equal(
      err.message,
      `Failed to invoke the method Greet in the service greet.GreetService. Tried 2 times (3 attempts) of the providers [${new URL(urls[0]).host}] (1/1) from the registry static on the consumer 127.0.0.1 using the triple-rpc version 0.1.0. Last error is unknown: name is not right: nobody`,
    );
    assert.equal(err.attempts, 3);
  });

  it("retries sets the attempts; failfast makes one attempt and returns the raw error", async () => {
    const g = grpcServers[0];
    let before = g.calls.Greet;
    const five = greet({ providers: [g.address], protocol: "grpc", retries: 4 });
    const err = (await five.greet({ name: "nobody" }).catch((e) => e)) as FailoverError;
    assert.equal(err.attempts, 5);
    assert.match(err.message, /Tried 4 times \(5 attempts\) of the providers/);
    assert.equal(g.calls.Greet - before, 5);

    before = g.calls.Greet;
    const ff = greet({ providers: [g.address], protocol: "grpc", cluster: "failfast" });
    const raw = (await ff.greet({ name: "nobody" }).catch((e) => e)) as RpcError;
    assert.ok(!(raw instanceof FailoverError));
    assert.equal(raw.message, "name is not right: nobody");
    assert.equal(g.calls.Greet - before, 1);
  });

  it("no retry after the first response message of a stream; retry before it", async () => {
    const a = await startGrpcJsServer({ failAfterFirst: "stream broke" });
    const b = await startGrpcJsServer({ failAfterFirst: "stream broke" });
    grpcServers.push(a, b);
    const c = greet({ providers: [a.address, b.address], protocol: "grpc" });
    const got: string[] = [];
    const err = await (async () => {
      for await (const r of c.greetServerStream({ name: "s" })) got.push(r.greeting);
    })().then(
      () => assert.fail("the stream should fail"),
      (e) => e as RpcError,
    );
    assert.deepEqual(got, ["hello, s (1/3)"]);
    assert.ok(!(err instanceof FailoverError));
    assert.equal(err.code, Code.Unavailable);
    assert.equal(err.message, "stream broke");
    assert.equal(a.calls.GreetServerStream + b.calls.GreetServerStream, 1, "one attempt only");

    // Failing before any message: retried like a unary call.
    const before = a.calls.GreetServerStream + b.calls.GreetServerStream;
    const err2 = (await collect(c.greetServerStream({ name: "fail-first" })).catch((e) => e)) as FailoverError;
    assert.ok(err2 instanceof FailoverError);
    assert.equal(a.calls.GreetServerStream + b.calls.GreetServerStream - before, 3);
  });

  it("failsafe resolves undefined; failback retries in the background", async () => {
    const g = grpcServers[1];
    const fs = greet({ providers: [g.address], protocol: "grpc", cluster: "failsafe" });
    assert.equal(await fs.greet({ name: "nobody" }), undefined);
    const before = g.calls.Greet;
    const fb = greet({ providers: [g.address], protocol: "grpc", cluster: "failback", retries: 2, failbackIntervalMs: 30 });
    assert.equal(await fb.greet({ name: "nobody" }), undefined);
    await waitFor(() => g.calls.Greet - before >= 3, 5000, "two background retries");
    // Three more intervals: no third retry.
    await new Promise((r) => setTimeout(r, 90));
    assert.equal(g.calls.Greet - before, 3, "the first attempt and two background retries");
  });

  it("forking wins with one live provider of two; broadcast calls every provider", async () => {
    const down = `127.0.0.1:${await freePort()}`;
    const fk = greet({ providers: [down, grpcServers[2].address], protocol: "grpc", cluster: "forking", forks: 2 });
    assert.deepEqual(await fk.greet({ name: "triple" }), { greeting: "triple" });

    const before = grpcServers.slice(0, 3).map((s) => s.calls.Greet);
    const bc = greet({ providers: grpcServers.slice(0, 3).map((s) => s.address), protocol: "grpc", cluster: "broadcast" });
    assert.deepEqual(await bc.greet({ name: "triple" }), { greeting: "triple" });
    assert.deepEqual(
      grpcServers.slice(0, 3).map((s, i) => s.calls.Greet - before[i]),
      [1, 1, 1],
    );
    const err = (await bc.greet({ name: "nobody" }).catch((e) => e)) as RpcError;
    assert.equal(err.code, Code.Unknown);
  });

  it("bad options fail at createClient with a clear message", () => {
    assert.throws(() => createClient(GreetServiceImpl, { providers: [] }), /at least one provider/);
    assert.throws(() => createClient(GreetServiceImpl, { providers: "h:1", cluster: "nope" as never }), /unknown cluster policy "nope"/);
    assert.throws(() => createClient(GreetServiceImpl, { providers: "h:1", loadBalance: "nope" as never }), /unknown load balancer/);
    assert.throws(() => createClient(GreetServiceImpl, { providers: "h:1", protocol: "grpc", httpVersion: "1.1" }), /HTTP\/2/);
    assert.throws(() => createClient(GreetServiceImpl, { providers: "ftp://h:1" }), /http:\/\/ and https:\/\//);
  });
});
