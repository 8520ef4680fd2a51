import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, Service, type TripleServer } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { JSON_HEADERS } from "../helpers/http.js";
import { type Caller, errorOf, http1Caller, http2Caller } from "./callers.js";
import { CalcService } from "./fixtures.js";

describe("error responses: JSON body with status, message and code (issue 2 item 5)", () => {
  let server: TripleServer;
  let strict: TripleServer;
  let callers: Caller[];
  let strictCallers: Caller[];
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new CalcService()] });
    strict = createServer({ services: [new CalcService()], requireProtocolVersion: true });
    await server.listen({ port: 0 });
    await strict.listen({ port: 0 });
    callers = [http1Caller(server.url), http2Caller(server.url)];
    strictCallers = [http1Caller(strict.url), http2Caller(strict.url)];
  });
  after(async () => {
    for (const c of [...callers, ...strictCallers]) c.close();
    await Promise.all([server.close(), strict.close()]);
  });

  for (const v of ["1.1", "2"] as const) {
    const c = () => callers[v === "1.1" ? 0 : 1];
    const s = () => strictCallers[v === "1.1" ? 0 : 1];
    const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = JSON_HEADERS) => c().call(path, { headers, body });

    describe(`HTTP/${v}`, () => {
      it("unknown service: 404, status 60, names the service", async () => {
        const r = await post("/no.Such/Call", "[]");
        assert.equal(r.status, 404);
        assert.equal(r.headers["content-type"], "application/json");
        assert.deepEqual(errorOf(r), { status: 60, message: "service not found: no.Such", code: "unimplemented" });
      });

      it("unknown method: 404, status 60, names method and service", async () => {
        const r = await post("/test.Calc/mul", "[]");
        assert.equal(r.status, 404);
        assert.deepEqual(errorOf(r), {
          status: 60,
          message: "method not found: mul in service test.Calc (did you mean sum?)",
          code: "unimplemented",
        });
      });

      it("an unknown method or service names the nearest registered ones; a name far from all, or too long, none", async () => {
        assert.equal(errorOf(await post("/test.Calc/ad", "[]")).message, "method not found: ad in service test.Calc (did you mean add?)");
        assert.equal(errorOf(await post("/test.Calc/Echoo", "[]")).message, "method not found: Echoo in service test.Calc (did you mean echo?)");
        assert.equal(errorOf(await post("/test.Clac/add", "[]")).message, "service not found: test.Clac (did you mean test.Calc?)");
        assert.equal(errorOf(await post("/test.Calc/zzzzzzzz", "[]")).message, "method not found: zzzzzzzz in service test.Calc");
        const long = "a".repeat(49);
        assert.equal(errorOf(await post(`/test.Calc/${long}`, "[]")).message, `method not found: ${long} in service test.Calc`);
      });

      it("paths without a method are 404", async () => {
        for (const p of ["/", "/test.Calc", "/test.Calc/", "/a/b/c"]) {
          const r = await post(p, "[]");
          assert.equal(r.status, 404, p);
          assert.equal(errorOf(r).status, 60);
        }
      });

      it("unsupported Content-Type: 415, status 25, lists what is supported", async () => {
        const r = await post("/test.Calc/add", "[1,2]", { "content-type": "application/vnd.weird" });
        assert.equal(r.status, 415);
        assert.equal(r.headers["content-type"], "application/json");
        const e = errorOf(r);
        assert.equal(e.status, 25);
        assert.match(e.message, /unsupported Content-Type "application\/vnd.weird"; supported: application\/json/);
      });

      it("missing Content-Type: 415", async () => {
        const r = await post("/test.Calc/add", "[1,2]", {});
        assert.equal(r.status, 415);
        assert.match(errorOf(r).message, /missing Content-Type/);
      });

      it("application/proto on a method without a .proto: its derived schema's messages; bytes that do not decode are 400", async () => {
        const r = await post("/test.Calc/add", Buffer.alloc(0), { "content-type": "application/proto" });
        assert.equal(r.status, 200, r.text());
        assert.equal(r.headers["content-type"], "application/proto");
        const bad = await post("/test.Calc/add", Buffer.from([0x0a, 0xff]), { "content-type": "application/proto" });
        assert.equal(bad.status, 400, bad.text());
        assert.equal(errorOf(bad).code, "invalid_argument");
      });

      it("invalid JSON: 400, status 25", async () => {
        const r = await post("/test.Calc/add", "{nope");
        assert.equal(r.status, 400);
        const e = errorOf(r);
        assert.equal(e.status, 25);
        assert.equal(e.code, "invalid_argument");
        assert.match(e.message, /^invalid JSON: /);
      });

      it("truncated JSON: 400, status 25", async () => {
        const r = await post("/test.Calc/add", "[1, 2");
        assert.equal(r.status, 400);
        assert.equal(errorOf(r).status, 25);
      });

      it("an empty JSON body for a method with parameters: 400, status 25", async () => {
        const r = await post("/test.Calc/add", "");
        assert.equal(r.status, 400);
        assert.deepEqual(errorOf(r), { status: 25, message: "empty JSON body", code: "invalid_argument" });
      });

      it("wrong arity: 400, status 40", async () => {
        const r = await post("/test.Calc/add", "[1,2,3]");
        assert.equal(r.status, 400);
        assert.deepEqual(errorOf(r), {
          status: 40,
          message: "expected 2 arguments in the JSON array, got 3",
          code: "invalid_argument",
        });
        const few = await post("/test.Calc/add", "[1]");
        assert.equal(few.status, 400);
        assert.equal(errorOf(few).status, 40);
      });

      it("wrong types: 400, status 40, naming the parameter", async () => {
        const r = await post("/test.Calc/add", '[1,"two"]');
        assert.equal(r.status, 400);
        const { details, ...body } = errorOf(r) as unknown as { details: { type: string; debug: unknown }[] };
        assert.deepEqual(body, {
          status: 40,
          message: 'parameter #2 (b) must be a finite number, got string "two"',
          code: "invalid_argument",
        });
        // The field, also as JSON for browsers (issue 37).
        assert.deepEqual(details[0].debug, { fieldViolations: [{ field: "b", description: 'must be a finite number, got string "two"' }] });
        const nested = await post("/test.Calc/norm", '{"x":1,"y":true}');
        assert.equal(nested.status, 400);
        assert.match(errorOf(nested).message, /^parameter #1\.y must be a finite number, got boolean true/);
        const missing = await post("/test.Calc/add", '{"a":1}');
        assert.equal(missing.status, 400);
        assert.equal(errorOf(missing).message, "parameter #2 (b) is missing");
      });

      it("IDL JSON with a wrongly typed field: 400, status 40", async () => {
        const r = await post("/greet.GreetService/Greet", '{"name":12}');
        assert.equal(r.status, 400);
        const e = errorOf(r);
        assert.equal(e.status, 40);
        assert.match(e.message, /greet\.GreetRequest/);
      });

      it("invalid protobuf bytes: 400, status 25", async () => {
        const r = await post("/greet.GreetService/Greet", Buffer.from([0x0a, 0x20, 0x41]), {
          "content-type": "application/proto",
        });
        assert.equal(r.status, 400);
        const e = errorOf(r);
        assert.equal(e.status, 25);
        assert.match(e.message, /^invalid greet\.GreetRequest message: /);
        const garbage = await post("/greet.GreetService/Greet", Buffer.from([0xff, 0xff, 0xff, 0xff]), {
          "content-type": "application/proto",
        });
        assert.equal(garbage.status, 400);
        assert.equal(errorOf(garbage).status, 25);
      });

      it("only POST: GET, PUT and DELETE get 405 with Allow: POST", async () => {
        for (const method of ["GET", "PUT", "DELETE"]) {
          const r = await c().call("/test.Calc/add", { method, headers: JSON_HEADERS });
          assert.equal(r.status, 405, method);
          assert.equal(r.headers.allow, "POST");
          assert.equal(r.headers["content-type"], "application/json");
          assert.match(errorOf(r).message, new RegExp(`HTTP method ${method} is not supported: use POST`));
        }
      });

      it("tri-protocol-version: missing is fine by default; another major version is 400", async () => {
        assert.equal((await post("/test.Calc/add", "[1,2]")).status, 200);
        const ok = await c().call("/test.Calc/add", {
          headers: { ...JSON_HEADERS, "tri-protocol-version": "1.0.0" },
          body: "[1,2]",
        });
        assert.equal(ok.status, 200);
        const bad = await c().call("/test.Calc/add", {
          headers: { ...JSON_HEADERS, "tri-protocol-version": "2.0.0" },
          body: "[1,2]",
        });
        assert.equal(bad.status, 400);
        assert.equal(errorOf(bad).status, 40);
        assert.match(errorOf(bad).message, /tri-protocol-version "2\.0\.0"/);
      });

      it("requireProtocolVersion: a call without tri-protocol-version is 400, status 40", async () => {
        const r = await s().call("/test.Calc/add", { headers: JSON_HEADERS, body: "[1,2]" });
        assert.equal(r.status, 400);
        assert.equal(r.headers["content-type"], "application/json");
        assert.deepEqual(errorOf(r), {
          status: 40,
          message: 'missing required header: set tri-protocol-version to "1.0.0"',
          code: "invalid_argument",
        });
        for (const version of ["1.0.0", "1", "1.2"]) {
          const ok = await s().call("/test.Calc/add", {
            headers: { ...JSON_HEADERS, "tri-protocol-version": version },
            body: "[1,2]",
          });
          assert.equal(ok.status, 200, version);
        }
      });

      it("the connection keeps serving after each kind of error", async () => {
        const bad: [string, string, Record<string, string>][] = [
          ["/test.Calc/add", "[1", JSON_HEADERS],
          ["/test.Calc/add", "[1]", JSON_HEADERS],
          ["/x/y", "[]", JSON_HEADERS],
          ["/test.Calc/add", "[]", { "content-type": "text/x-nope" }],
          ["/test.Calc/fail", '"boom"', JSON_HEADERS],
        ];
        for (const [path, body, headers] of bad) {
          const r = await post(path, body, headers);
          assert.notEqual(r.status, 200);
          const ok = await post("/test.Calc/add", "[20,22]");
          assert.equal(ok.status, 200);
          assert.equal(ok.json(), 42);
        }
      });
    });
  }
});

describe("a service class whose methods lack @Method()", () => {
  it("is refused naming the fix and the undecorated methods", () => {
    @Service("test.Forgot")
    class Forgot {
      async hello(name: string): Promise<string> {
        return `hello ${name}`;
      }
      bye(): string {
        return "bye";
      }
    }
    assert.throws(
      () => createServer({ services: [new Forgot()] }),
      (e: Error) =>
        e instanceof TypeError &&
        e.message === "service test.Forgot (Forgot) exposes no methods: mark each method to serve with @Method(); its methods hello, bye have no @Method()",
    );
  });
});
