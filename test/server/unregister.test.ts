import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, Get, Method, Path, Service, type TripleServer } from "../../src/index.js";
import { Gate } from "../helpers/gate.js";
import { UserService } from "../rest/fixtures.js";
import { type Caller, http1Caller } from "./callers.js";

const JSON_CT = { "content-type": "application/json" };

@Service("demo.HeldService")
class HeldService {
  readonly gate = new Gate();

  @Method()
  async hold(): Promise<string> {
    await this.gate.pass();
    return "done";
  }
}

/** Its second method's REST route is UserService's: registering it beside UserService fails. */
@Service("demo.ClashService")
class ClashService {
  @Method()
  first(): string {
    return "first";
  }

  @Get("/users/{id}")
  @Method()
  get(@Path("id") id: number): number {
    return id;
  }
}

describe("server.unregister: a service withdrawn at run time", () => {
  let server: TripleServer;
  let caller: Caller;
  before(async () => {
    server = createServer({});
    await server.listen({ port: 0 });
    caller = http1Caller(server.url);
  });
  after(async () => {
    caller.close();
    await server.close();
  });

  const rest = () => caller.call("/users/1", { method: "GET" });
  const rpc = (headers: Record<string, string> = {}) =>
    caller.call("/demo.UserService/get", { method: "POST", headers: { ...JSON_CT, ...headers }, body: "[1]" });

  it("its RPC paths and REST routes answer 404 afterwards; another version stays; registering it again works", async () => {
    const plain = new UserService();
    const v2 = new UserService();
    server.register(plain).register(v2, { version: "2.0.0" });
    assert.equal((await rest()).status, 200);
    assert.equal((await rpc()).status, 200);
    assert.equal(server.registeredServices.filter((s) => s.name === "demo.UserService").length, 2);

    server.unregister(plain);
    assert.equal((await rpc()).status, 404, "the plain registration is gone");
    assert.equal((await rpc({ "tri-service-version": "2.0.0" })).status, 200, "version 2.0.0 stays");
    assert.equal((await rest()).status, 404, "a REST route of the plain registration is gone");
    assert.equal((await caller.call("/users/1", { method: "GET", headers: { "tri-service-version": "2.0.0" } })).status, 200);
    assert.deepEqual(
      server.registeredServices.filter((s) => s.name === "demo.UserService").map((s) => s.version),
      ["2.0.0"],
    );

    server.unregister(v2, { version: "2.0.0" });
    const gone = await rpc({ "tri-service-version": "2.0.0" });
    assert.equal(gone.status, 404);
    assert.match(gone.text(), /service not found: demo\.UserService/);
    assert.equal((await caller.call("/users/1", { method: "GET", headers: { "tri-service-version": "2.0.0" } })).status, 404, "no REST route left at all");

    server.register(plain);
    assert.equal((await rest()).status, 200, "registered again");
    assert.equal((await rpc()).status, 200);
    server.unregister(plain);
  });

  it("a call already running when its service is withdrawn finishes; the next one is 404", async () => {
    const held = new HeldService();
    server.register(held);
    const running = caller.call("/demo.HeldService/hold", { method: "POST", headers: JSON_CT, body: "[]" });
    for (const deadline = Date.now() + 5000; !held.gate.started && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    assert.ok(held.gate.started);
    server.unregister(held);
    held.gate.open();
    const r = await running;
    assert.equal(r.status, 200, r.text());
    assert.equal(r.json(), "done");
    assert.equal((await caller.call("/demo.HeldService/hold", { method: "POST", headers: JSON_CT, body: "[]" })).status, 404);
  });

  it("a register() that fails (a REST route conflict) leaves nothing served; unregister of it is the TypeError and withdraws no other service", async () => {
    const u = new UserService();
    const c = new ClashService();
    server.register(u);
    assert.throws(() => server.register(c), /REST route GET \/users\/\{id\} \(demo\.ClashService\.get\) conflicts with/);
    const first = await caller.call("/demo.ClashService/first", { method: "POST", headers: JSON_CT, body: "[]" });
    assert.equal(first.status, 404, "a method registered before the conflict is not served");
    assert.throws(() => server.unregister(c), /unregister: service demo\.ClashService is not registered with this implementation/);
    assert.ok(
      server.registeredServices.some((s) => s.name === "demo.UserService"),
      "UserService is still listed",
    );
    assert.equal((await rest()).status, 200);
    server.unregister(u);
    server.register(c);
    assert.equal(
      (await caller.call("/demo.ClashService/first", { method: "POST", headers: JSON_CT, body: "[]" })).status,
      200,
      "it registers once the conflict is gone",
    );
    server.unregister(c);
  });

  it("an implementation that is not registered (or not under that version) is a TypeError naming the fix", () => {
    const u = new UserService();
    assert.throws(
      () => server.unregister(u),
      /unregister: service demo\.UserService is not registered with this implementation; pass the instance \(and version\/group\) given to register\(\)/,
    );
    server.register(u, { version: "3.0.0" });
    assert.throws(() => server.unregister(u), /not registered with this implementation/);
    server.unregister(u, { version: "3.0.0" });
  });
});
