import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Body, closeClient, createClient, createServer, Get, Method, Path, Post, Query, Service, type TripleServer } from "../../src/index.js";
import { type Caller, http1Caller, http2Caller } from "../server/callers.js";
import { UserService } from "./fixtures.js";

const JSON_CT = { "content-type": "application/json" };

describe("REST mappings (issue 28, item 1)", () => {
  let server: TripleServer;
  let callers: Caller[];
  before(async () => {
    server = createServer({ services: [new UserService()] });
    await server.listen({ port: 0 });
    callers = [http1Caller(server.url), http2Caller(server.url)];
  });
  after(async () => {
    for (const c of callers) c.close();
    await server.close();
  });

  for (const v of ["1.1", "2"] as const) {
    const c = () => callers[v === "1.1" ? 0 : 1];
    const get = (path: string, headers: Record<string, string> = {}) => c().call(path, { method: "GET", headers });

    describe(`HTTP/${v}`, () => {
      it("GET with a path variable binds and converts it", async () => {
        const r = await get("/users/1");
        assert.equal(r.status, 200, r.text());
        assert.match(String(r.headers["content-type"]), /^application\/json/);
        assert.deepEqual(r.json(), { id: 1, name: "ann", tags: ["admin"] });
      });

      it("a literal path beats a template (/users/me vs /users/{id}), headers bind", async () => {
        const r = await get("/users/me", { "x-user": "carol" });
        assert.equal(r.json(), "you are carol");
      });

      it("query parameters: optional ones may be absent, repeated keys fill arrays", async () => {
        assert.ok((await get("/users")).json().length >= 2);
        assert.deepEqual((await get("/users?limit=1")).json(), [{ id: 1, name: "ann", tags: ["admin"] }]);
        assert.deepEqual(
          (await get("/users?tag=admin&tag=admin&limit=5")).json().map((u: { id: number }) => u.id),
          [1],
        );
        assert.deepEqual(
          (await get("/users?tag%5B%5D=admin&tag[]=admin")).json().map((u: { id: number }) => u.id),
          [1],
        );
      });

      it("every scalar type converts from text; number arrays from repeated keys", async () => {
        const r = await get("/types/yes/12345678901234567890/2024-02-03T04:05:06Z?n=1&n=2.5");
        assert.equal(r.json(), "boolean:true bigint:12345678901234567890 2024-02-03T04:05:06.000Z number,number:1+2.5");
      });

      it("URL-encoded path segments are decoded after splitting (%2F stays inside the segment)", async () => {
        assert.equal((await get("/files/a%2Fb%20c%C3%A9")).json(), "a/b cé");
      });

      it("a path parameter that fails its type: 400 naming it", async () => {
        const r = await get("/users/abc");
        assert.equal(r.status, 400);
        assert.equal(r.json().code, "invalid_argument");
        assert.equal(r.json().message, 'path parameter "id" must be a finite number, got string "abc"');
        const bad = await get("/types/maybe/1/2024-01-01?n=1");
        assert.equal(bad.status, 400);
        assert.match(bad.json().message, /path parameter "flag" must be a boolean/);
        const q = await get("/types/true/1/2024-01-01?n=x");
        assert.match(q.json().message, /query parameter "n"\[0\] must be a finite number/);
        // Decimal only (Number() would read 0x10 as 16), and no integer silently rounded past 2^53.
        const hex = await get("/users?limit=0x10");
        assert.equal(hex.status, 400);
        assert.equal(hex.json().message, 'query parameter "limit" must be a finite number, got string "0x10"');
        const big = await get("/users/9007199254740993");
        assert.equal(big.status, 400);
        assert.equal(
          big.json().message,
          'path parameter "id" must be an integer within ±9007199254740991 (declare the parameter bigint or string for larger ones), got string "9007199254740993"',
        );
        assert.deepEqual(
          (await get("/types/true/1/2024-01-01?n=-1.5e2&n=.5&n=9007199254740991")).json(),
          "boolean:true bigint:1 2024-01-01T00:00:00.000Z number,number,number:-150+0.5+9007199254740991",
        );
        const enc = await get("/files/%E0%A4%A");
        assert.equal(enc.status, 400);
        assert.match(enc.json().message, /path parameter "name" is not valid percent-encoded/);
      });

      it("validation constraints on REST parameters are checked: 400 naming the parameter", async () => {
        const r = await get("/users?limit=500");
        assert.equal(r.status, 400);
        const { details, ...body } = r.json() as { details: { type: string }[] };
        assert.deepEqual(body, { status: 40, code: "invalid_argument", message: "parameter #1 (limit) must be at most 50" });
        assert.equal(details[0].type, "google.rpc.BadRequest");
      });

      it("a required query parameter or header that is missing: 400 naming it", async () => {
        const r = await get("/types/true/1/2024-01-01");
        assert.equal(r.status, 400);
        assert.match(r.json().message, /query parameter "n" is missing/);
        const h = await get("/users/me");
        assert.equal(h.status, 400);
        assert.match(h.json().message, /header "x-user" is missing/);
      });

      it("HEAD answers a GET route with its headers and no body", async () => {
        const g = await get("/users/1");
        const h = await c().call("/users/1", { method: "HEAD" });
        assert.equal(h.status, 200);
        assert.equal(h.body.length, 0);
        assert.equal(Number(h.headers["content-length"]), g.body.length);
      });

      it("404 for a path nothing answers, 405 with Allow for a known path and another HTTP method", async () => {
        const nf = await get("/nothing/here");
        assert.equal(nf.status, 404);
        assert.match(nf.json().message, /no route for GET \/nothing\/here/);
        const put = await c().call("/users", { method: "PUT", headers: JSON_CT, body: "{}" });
        assert.equal(put.status, 405);
        assert.equal(put.headers.allow, "GET, HEAD, POST");
        assert.deepEqual(put.json(), { status: 40, code: "unimplemented", message: "HTTP method PUT is not allowed on /users: use GET, HEAD, POST" });
        const post = await c().call("/users/1", { method: "POST", headers: JSON_CT, body: "{}" });
        assert.equal(post.status, 405);
        assert.equal(post.headers.allow, "GET, HEAD, PUT, DELETE");
        // RPC paths keep today's answer to other HTTP methods.
        const rpcGet = await get("/demo.UserService/ping");
        assert.equal(rpcGet.status, 405);
        assert.equal(rpcGet.headers.allow, "POST");
      });

      it("POST, PUT with a JSON body; PATCH with a form body; DELETE with an optional header", async () => {
        const created = await c().call("/users", { headers: JSON_CT, body: JSON.stringify({ id: 0, name: "dan", tags: ["x"] }) });
        assert.equal(created.status, 200, created.text());
        assert.equal(created.json().name, "dan");
        const put = await c().call("/users/2", { method: "PUT", headers: JSON_CT, body: JSON.stringify({ id: 2, name: "bo" }) });
        assert.deepEqual(put.json(), { id: 2, name: "bo" });
        const patch = await c().call("/users/2/name", {
          method: "PATCH",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "name=bobby+tables",
        });
        assert.equal(patch.json(), "renamed 2 to bobby tables");
        assert.equal((await c().call("/users/7", { method: "DELETE" })).json(), "deleted 7");
        assert.equal((await c().call("/users/7", { method: "DELETE", headers: { "x-tenant": "eu" } })).json(), "deleted 7 in eu");
      });

      it("a body route without Content-Type: 415 naming the supported types", async () => {
        const r = await c().call("/users", { method: "POST", body: "{}" });
        assert.equal(r.status, 415);
        assert.match(r.json().message, /missing Content-Type/);
      });

      it("multipart upload to a REST route: path variable plus parts", async () => {
        const form = new FormData();
        form.append("title", "me");
        form.append("file", new Blob([new Uint8Array(300)], { type: "image/png" }), "me.png");
        const req = new Request("http://x/", { method: "POST", body: form });
        const body = Buffer.from(await req.arrayBuffer());
        const r = await c().call("/users/1/avatar", { headers: { "content-type": req.headers.get("content-type") as string }, body });
        assert.equal(r.status, 200, r.text());
        assert.equal(r.json(), "user 1: me me.png 300 bytes");
      });

      it("response negotiation: Accept application/xml gets XML", async () => {
        const r = await get("/users/2", { accept: "application/xml" });
        assert.match(String(r.headers["content-type"]), /^application\/xml/);
        assert.match(r.text(), /<User><id>2<\/id><name>/);
      });

      it("the same methods stay callable by their RPC paths", async () => {
        const r = await c().call("/demo.UserService/get", { headers: JSON_CT, body: "[1]" });
        assert.equal(r.json().name, "ann");
        const p = await c().call("/demo.UserService/ping", { headers: JSON_CT, body: '["x"]' });
        assert.equal(p.json(), "pong x");
      });
    });
  }

  for (const protocol of ["triple", "grpc", "connect"] as const) {
    it(`the typed client calls a REST-mapped method by its RPC name over ${protocol}`, async () => {
      const client = createClient(UserService, { providers: server.url, protocol });
      try {
        const u = await client.get(1);
        assert.equal(u.name, "ann");
        assert.equal(await client.remove(3, "us"), "deleted 3 in us");
      } finally {
        await closeClient(client);
      }
    });
  }
});

describe("REST mapping declared in @Method({ http, params }) (the form for standard decorators)", () => {
  @Service("demo.Declared")
  class Declared {
    @Method({
      http: { method: "PUT", path: "/declared/{id}" },
      params: [
        { name: "id", type: Number, in: "path" },
        { name: "note", type: String, in: "query", optional: true },
        { name: "body", type: [Number], in: "body" },
      ],
    })
    put(id: number, note: string | undefined, body: number[]): string {
      return `${typeof id}:${id} ${note} ${body.reduce((a, b) => a + b, 0)}`;
    }
  }

  it("binds path, query and body as the parameter decorators would", async () => {
    const server = createServer({ services: [new Declared()] });
    await server.listen({ port: 0 });
    try {
      const r = await fetch(`${server.url}/declared/5?note=n`, { method: "PUT", headers: JSON_CT, body: "[1,2,3]" });
      assert.equal(await r.json(), "number:5 n 6");
      const d = server.registeredServices.find((s) => s.name === "demo.Declared")?.methods[0];
      assert.deepEqual(d?.http, { method: "PUT", path: "/declared/{id}", segments: ["declared", { param: "id" }] });
      assert.deepEqual(
        d?.params.map((p) => p.in),
        ["path", "query", undefined],
      );
    } finally {
      await server.close();
    }
  });
});

describe("REST mapping registration errors", () => {
  it("two routes of one HTTP method with the same shape conflict", () => {
    @Service("c.A")
    class A {
      @Get("/things/{id}") one(@Path("id") id: string) {
        return id;
      }
    }
    @Service("c.B")
    class B {
      @Get("/things/{name}") two(@Path("name") name: string) {
        return name;
      }
    }
    assert.throws(
      () => createServer({ services: [new A(), new B()] }),
      /REST route GET \/things\/\{name\} \(c\.B\.two\) conflicts with GET \/things\/\{id\} \(c\.A\.one\)/,
    );
  });

  it("a @Path without its {segment}, a {segment} without its parameter, @Body on GET, a partial variable", () => {
    assert.throws(() => {
      @Service("e.One")
      class One {
        @Get("/x/{id}") m(@Path("other") o: string, @Path("id") id: string) {
          return o + id;
        }
      }
      createServer({ services: [new One()] });
    }, /is @Path\("other"\) but the REST path has no \{other\} segment/);
    assert.throws(() => {
      @Service("e.Two")
      class Two {
        @Post("/x/{id}") m(@Body() b: string) {
          return b;
        }
      }
      createServer({ services: [new Two()] });
    }, /the REST path \/x\/\{id\} has \{id\} but no parameter takes it; declare @Path\("id"\)/);
    assert.throws(() => {
      @Service("e.Three")
      class Three {
        @Get("/x") m(@Body() b: string) {
          return b;
        }
      }
      createServer({ services: [new Three()] });
    }, /is @Body\(\) on a GET route: GET has no body/);
    assert.throws(() => {
      @Service("e.Four")
      class Four {
        @Get("/x/id-{id}") m(@Path("id") id: string) {
          return id;
        }
      }
      createServer({ services: [new Four()] });
    }, /a path variable must be a whole segment/);
    assert.throws(() => {
      @Service("e.Five")
      class Five {
        @Method() m(@Query("q") q: string) {
          return q;
        }
      }
      createServer({ services: [new Five()] });
    }, /is @Query but the method has no REST mapping/);
  });
});

describe("REST routes with auth, interceptors and server streams", () => {
  @Service("demo.Feed")
  class Feed {
    @Get("/feed/{n}")
    @Method({ kind: "server_streaming" })
    async *feed(@Path("n") n: number): AsyncGenerator<string> {
      for (let i = 1; i <= n; i++) yield `item ${i}`;
    }

    @Get("/echo")
    echo(@Query("message") message: string, @Query({ name: "connect", type: String, optional: true }) connect?: string): string {
      return `${message}${connect ?? ""}`;
    }

    @Get("/secret/{id}")
    @Method({ auth: true })
    secret(@Path("id") id: string): string {
      return `secret ${id}`;
    }
  }
  let server: TripleServer;
  const seen: string[] = [];
  before(async () => {
    server = createServer({
      services: [new Feed()],
      auth: { verify: async (token) => (token === "good" ? { subject: "ann" } : undefined) },
      interceptors: [
        (next) => async (call) => {
          seen.push(call.method.path);
          return next(call);
        },
      ],
    });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("a server-streaming method with a GET mapping answers Server-Sent Events", async () => {
    const r = await fetch(`${server.url}/feed/3`, { headers: { accept: "text/event-stream" } });
    assert.equal(r.status, 200);
    assert.match(String(r.headers.get("content-type")), /^text\/event-stream/);
    const text = await r.text();
    assert.deepEqual(
      [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]),
      ['"item 1"', '"item 2"', '"item 3"'],
    );
  });

  it("query names Connect GETs use (message, connect) reach a REST route, not the Connect handler", async () => {
    const r = await fetch(`${server.url}/echo?message=hi&connect=v1`);
    assert.equal(r.status, 200);
    assert.equal(await r.json(), "hiv1");
  });

  it("bearer auth and interceptors run on REST calls as on RPC calls", async () => {
    const denied = await fetch(`${server.url}/secret/7`);
    assert.equal(denied.status, 401);
    const ok = await fetch(`${server.url}/secret/7`, { headers: { authorization: "Bearer good" } });
    assert.equal(await ok.json(), "secret 7");
    assert.ok(seen.includes("/demo.Feed/secret"));
  });
});

describe("REST routes of versioned registrations", () => {
  it("tri-service-version / tri-service-group pick the registration, as on RPC paths", async () => {
    const v2 = new UserService();
    v2.users.set(1, Object.assign(v2.users.get(1) as object, { name: "ann v2" }) as never);
    const server = createServer({ services: [new UserService(), { implementation: v2, version: "2.0.0" }] });
    await server.listen({ port: 0 });
    try {
      assert.equal(((await (await fetch(`${server.url}/users/1`)).json()) as { name: string }).name, "ann");
      const r = await fetch(`${server.url}/users/1`, { headers: { "tri-service-version": "2.0.0" } });
      assert.equal(((await r.json()) as { name: string }).name, "ann v2");
      const none = await fetch(`${server.url}/users/1`, { headers: { "tri-service-version": "9" } });
      assert.equal(none.status, 404);
      assert.match(((await none.json()) as { message: string }).message, /no implementation with version "9"/);
    } finally {
      await server.close();
    }
  });
});
