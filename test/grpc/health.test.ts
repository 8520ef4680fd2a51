import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { ServingStatus } from "../../src/runtime/health.js";
import { clients, grpc, unary } from "./grpc-js-client.js";

describe("built-in grpc.health.v1.Health", () => {
  let server: TripleServer;
  let health: any;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()] });
    const a = await server.listen({ port: 0 });
    health = new clients.health(`127.0.0.1:${a.port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    health.close();
    await server.close();
  });

  it('Check of the server ("") and of a registered service is SERVING', async () => {
    assert.equal((await unary(health, "Check", { service: "" })).response?.status, "SERVING");
    assert.equal((await unary(health, "Check", { service: "greet.GreetService" })).response?.status, "SERVING");
  });

  it("Check of an unknown service is NOT_FOUND (5)", async () => {
    const r = await unary(health, "Check", { service: "nope.Nope" });
    assert.equal(r.error?.code, grpc.status.NOT_FOUND);
  });

  it("Watch of an unknown service says SERVICE_UNKNOWN and keeps the stream open", async () => {
    const call = health.Watch({ service: "nope.Nope" });
    const first = await new Promise<any>((resolve) => call.once("data", resolve));
    assert.equal(first.status, "SERVICE_UNKNOWN");
    call.on("error", () => {});
    call.cancel();
  });

  it("setStatus reaches watchers; Watch sends NOT_SERVING and ends once close() starts", async () => {
    const call = health.Watch({ service: "greet.GreetService" });
    const seen: string[] = [];
    const ended = new Promise<number>((resolve) => call.on("status", (s: grpc.StatusObject) => resolve(s.code)));
    call.on("error", () => {});
    let notify: (() => void) | undefined;
    call.on("data", (m: any) => {
      seen.push(m.status);
      notify?.();
    });
    const next = () => new Promise<void>((r) => (notify = r));
    await next();
    let n = next();
    server.health!.setStatus("greet.GreetService", ServingStatus.NOT_SERVING);
    await n;
    n = next();
    server.health!.setStatus("greet.GreetService", undefined);
    await n;
    const closing = server.close();
    assert.equal(await ended, grpc.status.OK);
    await closing;
    assert.deepEqual(seen, ["SERVING", "NOT_SERVING", "SERVING", "NOT_SERVING"]);
    assert.equal(server.health!.statusOf(""), ServingStatus.NOT_SERVING);
  });
});
