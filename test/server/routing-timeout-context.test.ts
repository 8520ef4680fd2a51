import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { JSON_HEADERS } from "../helpers/http.js";
import { type Caller, errorOf, http1Caller, http2Caller } from "./callers.js";
import { CalcService, type ContextSeen, VersionedService } from "./fixtures.js";

describe("version/group routing, timeouts and the call context (issue 2 items 7, 8)", () => {
  let server: TripleServer;
  let calc: CalcService;
  let callers: Caller[];
  before(async () => {
    calc = new CalcService();
    server = createServer({
      services: [
        calc,
        new VersionedService("plain"),
        { implementation: new VersionedService("v1"), version: "1.0.0" },
        { implementation: new VersionedService("v2"), version: "2.0.0" },
        { implementation: new VersionedService("v2-blue"), version: "2.0.0", group: "blue" },
        { implementation: new VersionedService("blue"), group: "blue" },
      ],
    });
    await server.listen({ port: 0 });
    callers = [http1Caller(server.url), http2Caller(server.url)];
  });
  after(async () => {
    for (const c of callers) c.close();
    await server.close();
  });

  for (const v of ["1.1", "2"] as const) {
    const c = () => callers[v === "1.1" ? 0 : 1];
    const who = (headers: Record<string, string>) => c().call("/test.Versioned/who", { headers: { ...JSON_HEADERS, ...headers }, body: "[]" });

    describe(`HTTP/${v}`, () => {
      it("tri-service-version / tri-service-group select the registration", async () => {
        assert.equal((await who({})).json(), "plain");
        assert.equal((await who({ "tri-service-version": "1.0.0" })).json(), "v1");
        assert.equal((await who({ "tri-service-version": "2.0.0" })).json(), "v2");
        assert.equal((await who({ "tri-service-version": "2.0.0", "tri-service-group": "blue" })).json(), "v2-blue");
        assert.equal((await who({ "tri-service-group": "blue" })).json(), "blue");
      });

      it("no matching version/group: 404, status 60, naming service, version and group", async () => {
        const r = await who({ "tri-service-version": "9.9.9", "tri-service-group": "red" });
        assert.equal(r.status, 404);
        assert.deepEqual(errorOf(r), {
          status: 60,
          message: 'no implementation of service test.Versioned with version "9.9.9" and group "red"',
          code: "unimplemented",
        });
      });

      for (const header of ["tri-service-timeout", "rest-service-timeout"]) {
        it(`${header}: an overrunning handler's signal fires and the caller gets 408 / 31`, async () => {
          const before = calc.aborts.length;
          const t0 = Date.now();
          const r = await c().call("/test.Calc/slow", {
            headers: { ...JSON_HEADERS, [header]: "50" },
            body: "[5000]",
          });
          const took = Date.now() - t0;
          assert.equal(r.status, 408);
          assert.equal(r.headers["content-type"], "application/json");
          assert.deepEqual(errorOf(r), {
            status: 31,
            message: "the call exceeded its timeout of 50 ms",
            code: "deadline_exceeded",
          });
          // Not before the 50 ms timeout; before the handler's own 5 s (less a margin), so the
          // timeout ended it: one-sided and generous, a loaded machine only delays the answer.
          assert.ok(took >= 45 && took < 4900, `answered after ${took} ms`);
          assert.equal(calc.aborts.length, before + 1, "the handler's AbortSignal fired");
          const reason = calc.aborts.at(-1);
          assert.ok(reason instanceof RpcError);
          assert.equal(reason.code, Code.DeadlineExceeded);
        });
      }

      it("a handler that finishes within its timeout answers normally", async () => {
        const r = await c().call("/test.Calc/slow", {
          headers: { ...JSON_HEADERS, "tri-service-timeout": "2000" },
          body: "[10]",
        });
        assert.equal(r.status, 200);
        assert.equal(r.json(), "done");
      });

      it("a malformed timeout is 400", async () => {
        for (const bad of ["abc", "-5", "1.5", "12345678901"]) {
          const r = await c().call("/test.Calc/add", {
            headers: { ...JSON_HEADERS, "tri-service-timeout": bad },
            body: "[1,2]",
          });
          assert.equal(r.status, 400, bad);
          assert.equal(errorOf(r).message, `invalid tri-service-timeout value: "${bad}"`);
        }
      });

      it("the handler sees headers, deadline, signal and peer, and sets response headers", async () => {
        const t0 = Date.now();
        const r = await c().call("/test.Calc/probe", {
          headers: {
            ...JSON_HEADERS,
            "x-custom": "hello",
            "x-blob-bin": Buffer.from("bytes!").toString("base64").replace(/=+$/, ""),
            "tri-service-timeout": "5000",
          },
          body: '["t1"]',
        });
        assert.equal(r.status, 200, r.text());
        const seen: ContextSeen = r.json();
        assert.equal(seen.custom, "hello");
        assert.equal(seen.binary, "bytes!");
        assert.ok(seen.deadline !== undefined && seen.deadline >= t0 + 4900 && seen.deadline <= Date.now() + 5000);
        assert.ok(seen.remaining !== undefined && seen.remaining > 4000 && seen.remaining <= 5000);
        assert.equal(seen.peerAddress, "127.0.0.1");
        assert.ok(seen.peerPort > 0);
        assert.equal(seen.httpVersion, v);
        assert.equal(seen.signalIsAbortSignal, true);
        assert.equal(seen.aborted, false);
        assert.equal(r.headers["x-reply"], "seen-t1");
        assert.equal(r.headers["x-data-bin"], Buffer.from([1, 2, 3]).toString("base64"));
      });

      it("without a timeout there is no deadline", async () => {
        const seen: ContextSeen = (await c().call("/test.Calc/probe", { headers: JSON_HEADERS, body: '["t2"]' })).json();
        assert.equal(seen.deadline, undefined);
        assert.equal(seen.remaining, undefined);
      });
    });
  }

  it("a client that goes away mid-call fires the handler's signal with cancelled", async () => {
    const before = calc.aborts.length;
    const ac = new AbortController();
    const p = fetch(`${server.url}/test.Calc/slow`, {
      method: "POST",
      headers: JSON_HEADERS,
      body: "[5000]",
      signal: ac.signal,
    }).catch((e) => e);
    const started = calc.slowStarted;
    while (calc.slowStarted === started) await new Promise((r) => setTimeout(r, 5));
    ac.abort();
    await p;
    for (let i = 0; i < 100 && calc.aborts.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(calc.aborts.length, before + 1);
    assert.equal((calc.aborts.at(-1) as RpcError).code, Code.Cancelled);
    assert.equal(server.inflightCount, 0);
  });
});
