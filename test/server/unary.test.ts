import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { JSON_HEADERS } from "../helpers/http.js";
import { type Caller, http1Caller, http2Caller } from "./callers.js";
import { CalcService, NamesService, PROFILE_ROOT, ProfilesService } from "./fixtures.js";

describe("unary calls over HTTP/1.1 and HTTP/2 (issue 2 items 1, 3, 4)", () => {
  let server: TripleServer;
  let callers: Caller[];
  before(async () => {
    server = createServer({
      services: [new GreetServiceImpl(), new CalcService(), new NamesService(), new ProfilesService()],
    });
    await server.listen({ port: 0 });
    callers = [http1Caller(server.url), http2Caller(server.url)];
  });
  after(async () => {
    for (const c of callers) c.close();
    await server.close();
  });

  const json = (body: unknown) => ({ headers: JSON_HEADERS, body: JSON.stringify(body) });

  for (const v of ["1.1", "2"] as const) {
    const c = () => callers[v === "1.1" ? 0 : 1];
    describe(`HTTP/${v}`, () => {
      it("binds a JSON array of arguments in parameter order", async () => {
        const r = await c().call("/test.Calc/add", json([2, 40]));
        assert.equal(r.status, 200);
        assert.equal(r.headers["content-type"], "application/json");
        assert.equal(r.text(), "42");
      });

      it("binds a JSON object by parameter names", async () => {
        const r = await c().call("/test.Calc/add", json({ b: 1, a: 2 }));
        assert.equal(r.status, 200);
        assert.equal(r.json(), 3);
      });

      it("accepts the bare value for a one-parameter method", async () => {
        assert.equal((await c().call("/test.Calc/echo", json("hi"))).json(), "hi");
        assert.equal((await c().call("/test.Calc/echo", json(["hi"]))).json(), "hi");
        assert.equal((await c().call("/test.Calc/norm", json({ x: 3, y: 4 }))).json(), 5);
        assert.equal((await c().call("/test.Calc/sum", json([1, 2, 3]))).json(), 6);
        assert.equal((await c().call("/test.Calc/sum", json([[1, 2, 3]]))).json(), 6);
      });

      it("a method without parameters takes an empty body or []; void answers null", async () => {
        const r = await c().call("/test.Calc/nothing", { headers: JSON_HEADERS });
        assert.equal(r.status, 200);
        assert.equal(r.text(), "null");
        assert.equal((await c().call("/test.Calc/nothing", json([]))).status, 200);
      });

      it("the declared name and its upper-cased first letter both route", async () => {
        assert.equal((await c().call("/test.Calc/add", json([1, 1]))).json(), 2);
        assert.equal((await c().call("/test.Calc/Add", json([1, 1]))).json(), 2);
        assert.equal((await c().call("/test.Names/GetThing", json([]))).json(), "thing");
      });

      it('@Method("Hello") overrides the wire name', async () => {
        const r = await c().call("/test.Names/Hello", json(["bob"]));
        assert.equal(r.json(), "hello bob");
        const miss = await c().call("/test.Names/sayHello", json(["bob"]));
        assert.equal(miss.status, 404);
        assert.equal(miss.json().status, 60);
      });

      it("greet sample: JSON Greet answers the greeting", async () => {
        const r = await c().call("/greet.GreetService/Greet", json({ name: "triple" }));
        assert.equal(r.status, 200);
        assert.deepEqual(r.json(), { greeting: "triple" });
        const arr = await c().call("/greet.GreetService/Greet", json([{ name: "triple" }]));
        assert.deepEqual(arr.json(), { greeting: "triple" });
      });

      it("greet sample: application/proto in, application/proto out", async () => {
        const req = Buffer.from([0x0a, 6, ...Buffer.from("triple")]); // field 1, length 6
        const r = await c().call("/greet.GreetService/Greet", {
          headers: { "content-type": "application/proto" },
          body: req,
        });
        assert.equal(r.status, 200);
        assert.equal(r.headers["content-type"], "application/proto");
        assert.deepEqual([...r.body], [0x0a, 6, ...Buffer.from("triple")]);
      });

      it("greet sample: a handler error is 500, status 70, the handler's text, JSON body", async () => {
        const r = await c().call("/greet.GreetService/Greet", {
          headers: { "content-type": "application/proto" },
          body: Buffer.from([0x0a, 3, ...Buffer.from("bob")]),
        });
        assert.equal(r.status, 500);
        assert.equal(r.headers["content-type"], "application/json");
        assert.deepEqual(r.json(), { status: 70, message: "name is not right: bob", code: "unknown" });
      });

      it("IDL JSON accepts original and lowerCamelCase field names and answers ProtoJSON", async () => {
        const original = await c().call("/test.Profiles/Describe", json({ user_name: "ann", age_years: 40, tags: ["a"] }));
        assert.equal(original.status, 200, original.text());
        assert.deepEqual(original.json(), { displayName: "ann!", nextAge: 41, tagCount: 1 });
        const camel = await c().call("/test.Profiles/Describe", json([{ userName: "bo", ageYears: 1, tags: [] }]));
        assert.deepEqual(camel.json(), { displayName: "bo!", nextAge: 2 });
      });

      it("IDL proto: a message with snake_case fields round-trips", async () => {
        const Req = PROFILE_ROOT.lookupType("test.ProfileRequest");
        const Rep = PROFILE_ROOT.lookupType("test.ProfileReply");
        const body = Req.encode(Req.fromObject({ user_name: "cy", age_years: 9, tags: ["x", "y"] })).finish();
        const r = await c().call("/test.Profiles/Describe", {
          headers: { "content-type": "application/proto" },
          body,
        });
        assert.equal(r.status, 200);
        assert.deepEqual(Rep.toObject(Rep.decode(r.body)), { display_name: "cy!", next_age: 10, tag_count: 2 });
      });

      it("Accept naming another supported type wins: proto request, JSON response", async () => {
        const r = await c().call("/greet.GreetService/Greet", {
          headers: { "content-type": "application/proto", accept: "application/json" },
          body: Buffer.from([0x0a, 6, ...Buffer.from("triple")]),
        });
        assert.equal(r.headers["content-type"], "application/json");
        assert.deepEqual(r.json(), { greeting: "triple" });
      });

      it("Content-Type parameters (charset) are accepted", async () => {
        const r = await c().call("/test.Calc/echo", {
          headers: { "content-type": "application/json; charset=utf-8" },
          body: '"ü"',
        });
        assert.equal(r.status, 200);
        assert.equal(r.json(), "ü");
      });

      it("sync and async handler errors both give 500 / 70 with the handler's text", async () => {
        for (const m of ["fail", "failSync"]) {
          const r = await c().call(`/test.Calc/${m}`, json(["it broke"]));
          assert.equal(r.status, 500);
          assert.equal(r.headers["content-type"], "application/json");
          assert.deepEqual(r.json(), { status: 70, message: "it broke", code: "unknown" });
        }
      });

      it("many concurrent calls on the one connection all succeed", async () => {
        const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => c().call("/test.Calc/add", json([i, 1]))));
        assert.deepEqual(
          rs.map((r) => r.json()),
          Array.from({ length: 30 }, (_, i) => i + 1),
        );
      });
    });
  }

  it("HTTP/1.1 and HTTP/2 give byte-identical answers", async () => {
    const cases: [string, string][] = [
      ["/test.Calc/add", "[1,2]"],
      ["/greet.GreetService/Greet", '{"name":"x"}'],
      ["/test.Calc/add", "[1"],
      ["/nope/x", "[]"],
    ];
    for (const [path, body] of cases) {
      const [a, b] = await Promise.all(callers.map((cl) => cl.call(path, { headers: JSON_HEADERS, body })));
      assert.equal(a.status, b.status, path);
      assert.equal(a.headers["content-type"], b.headers["content-type"]);
      assert.equal(a.text(), b.text(), path);
    }
  });
});
