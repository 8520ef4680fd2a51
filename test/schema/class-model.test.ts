import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  CallContext,
  callOptions,
  closeClient,
  createClient,
  createServer,
  Field,
  Method,
  Param,
  RpcError,
  Service,
  type TripleServer,
  InMemoryFile,
} from "../../src/index.js";
import { FORM, multipart } from "../binder/multipart.js";
import { JSON_HEADERS, post1 } from "../helpers/http.js";
import { InventoryService, Item, Report } from "./inventory-service.js";

describe("the class is a checked schema", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new InventoryService()] });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  const call = (method: string, body: string, headers: Record<string, string> = JSON_HEADERS) =>
    post1(server.url, `/inventory.InventoryService/${method}`, { headers, body });

  describe("optional parameters", () => {
    it("a short JSON array leaves a trailing optional parameter undefined", async () => {
      const r = await call("adjustStock", '["A1",-1]');
      assert.equal(r.status, 200, r.text());
      assert.deepEqual(r.json(), { sku: "A1", delta: -1, reason: null });
      const full = await call("adjustStock", '["A1",-1,"damaged"]');
      assert.deepEqual(full.json(), { sku: "A1", delta: -1, reason: "damaged" });
    });

    it("an absent object key, form field or multipart part binds undefined", async () => {
      assert.deepEqual((await call("adjustStock", '{"sku":"A1","delta":2}')).json(), { sku: "A1", delta: 2, reason: null });
      assert.deepEqual((await call("adjustStock", "sku=A1&delta=2", FORM)).json(), { sku: "A1", delta: 2, reason: null });
      const m = multipart([
        { name: "sku", data: "A1" },
        { name: "delta", data: "2" },
      ]);
      const r = await post1(server.url, "/inventory.InventoryService/adjustStock", { headers: m.headers, body: m.body });
      assert.deepEqual(r.json(), { sku: "A1", delta: 2, reason: null });
    });

    it("a missing required parameter is a 400 that names it", async () => {
      const r = await call("adjustStock", '["A1"]');
      assert.equal(r.status, 400);
      assert.match(r.json().message, /parameter #2 \(delta\) is missing/);
      const f = await call("adjustStock", "sku=A1", FORM);
      assert.equal(f.status, 400);
      assert.match(f.json().message, /parameter #2 \(delta\) is missing/);
    });
  });

  describe("field presence", () => {
    it("a missing required field is a 400 naming parameter and field (every missing one)", async () => {
      const r = await call("addItem", '[{"sku":"D4"}]');
      assert.equal(r.status, 400);
      assert.equal(r.json().code, "invalid_argument");
      assert.equal(r.json().message, "parameter #1 (item).name is missing; parameter #1 (item).quantity is missing");
    });

    it("an optional field may be absent", async () => {
      const r = await call("addItem", '[{"sku":"D4","name":"nut","quantity":1}]');
      assert.deepEqual(r.json(), { sku: "D4", hasNote: false });
      const n = await call("addItem", '[{"sku":"D4","name":"nut","quantity":1,"note":"x"}]');
      assert.deepEqual(n.json(), { sku: "D4", hasNote: true });
    });
  });

  describe("declared results reach the typed client with their types", () => {
    for (const [label, options] of [
      ["Triple HTTP/1.1", { httpVersion: "1.1" as const }],
      ["Triple HTTP/2", { httpVersion: "2" as const }],
      ["gRPC", { protocol: "grpc" as const }],
      ["gRPC+json", { protocol: "grpc" as const, contentType: "grpc+json" as const }],
    ] as const) {
      it(label, async () => {
        const client = createClient(InventoryService, { providers: server.url, ...options });
        try {
          const r = await client.report("A1");
          assert.ok(r instanceof Report, "a Report instance");
          assert.ok(r.at instanceof Date);
          assert.equal(r.at.toISOString(), "2026-11-24T12:00:00.005Z");
          assert.ok(r.raw instanceof Uint8Array);
          assert.deepEqual([...r.raw], [0, 255, 7]);
          assert.equal(r.total, 2n ** 60n);
          assert.ok(r.counts instanceof Map);
          assert.equal(r.counts.get("A1"), 3);
          const now = await client.now();
          assert.ok(now instanceof Date);
          assert.equal(now.toISOString(), "2026-01-02T03:04:05.000Z");
          const items = await client.items();
          assert.ok(items[0] instanceof Item);
          assert.equal(items[0].quantity, 3);
          const adjusted = await client.adjustStock("A1", -1, undefined, callOptions({ timeoutMs: 5000 }));
          assert.deepEqual(adjusted, { sku: "A1", delta: -1, reason: null });
        } finally {
          closeClient(client);
        }
      });
    }
  });

  it("the router accepts the wire name with its first letter lower-cased", async () => {
    const r = await call("greet", '["ann"]');
    assert.equal(r.status, 200);
    assert.equal(r.json(), "hello ann");
    assert.equal((await call("Greet", '["bob"]')).json(), "hello bob");
  });
});

describe("registration refuses what would misbehave", () => {
  it("missing design:paramtypes names emitDecoratorMetadata and the method", () => {
    // What esbuild-based runners emit: the decorators run, but no design:* metadata exists.
    class Calc {
      add(a: number, b: number): number {
        return a + b;
      }
    }
    Service("calc.Calc")(Calc);
    Method()(Calc.prototype, "add", Object.getOwnPropertyDescriptor(Calc.prototype, "add")!);
    Param("a")(Calc.prototype, "add", 0);
    Param("b")(Calc.prototype, "add", 1);
    assert.throws(
      () => createServer({ services: [new Calc()], health: false }),
      (e: Error) => {
        assert.match(e.message, /^Calc\.add: parameter #1 has no type/);
        assert.match(e.message, /emitDecoratorMetadata/);
        return true;
      },
    );
  });

  it("parameters declared both with @Method({ params }) and with @Param: a registration error saying to pick one", () => {
    class Mixed {
      add(a: number, b: number): number {
        return a + b;
      }
    }
    Service("calc.Mixed")(Mixed);
    Method({
      params: [
        { name: "a", type: Number },
        { name: "b", type: Number },
      ],
    })(Mixed.prototype, "add", Object.getOwnPropertyDescriptor(Mixed.prototype, "add")!);
    Param({ name: "a", type: Number })(Mixed.prototype, "add", 0);
    assert.throws(
      () => createServer({ services: [new Mixed()], health: false }),
      /^TypeError: Mixed\.add: declare parameters either with @Method\(\{ params \}\) or with @Param\/@Ctx, not both$/,
    );
  });

  it("explicit parameter types need no metadata, and bind as declared", async () => {
    class Calc2 {
      add(a: number, b: number): number {
        return a + b;
      }
    }
    Service("calc.Calc2")(Calc2);
    Method()(Calc2.prototype, "add", Object.getOwnPropertyDescriptor(Calc2.prototype, "add")!);
    Param({ name: "a", type: Number })(Calc2.prototype, "add", 0);
    Param({ name: "b", type: Number })(Calc2.prototype, "add", 1);
    const server = createServer({ services: [new Calc2()], health: false });
    await server.listen({ port: 0 });
    try {
      const ok = await post1(server.url, "/calc.Calc2/add", { headers: JSON_HEADERS, body: "[1,2]" });
      assert.equal(ok.json(), 3);
      const bad = await post1(server.url, "/calc.Calc2/add", { headers: JSON_HEADERS, body: '["1","2"]' });
      assert.equal(bad.status, 400, "strings are not numbers, not concatenated");
    } finally {
      await server.close();
    }
  });

  it("two methods claiming one path", () => {
    @Service("clash.A")
    class A {
      @Method("Hello") a(): string {
        return "a";
      }
      @Method() hello(): string {
        return "b";
      }
    }
    assert.throws(() => createServer({ services: [new A()] }), /methods a and hello both answer \/clash\.A\/Hello/);
  });

  it("two classes with one @Service name, and one instance twice", () => {
    @Service("dup.Svc")
    class One {
      @Method() x(): number {
        return 1;
      }
    }
    @Service("dup.Svc")
    class Two {
      @Method() y(): number {
        return 2;
      }
    }
    assert.throws(() => createServer({ services: [new One(), new Two()] }), /classes One and Two are both service dup\.Svc/);
    const one = new One();
    assert.throws(() => createServer({ services: [one, one] }), /service dup\.Svc is registered twice with the same instance/);
    // Versions tell registrations apart.
    const ok = createServer({
      services: [
        { implementation: new One(), version: "1" },
        { implementation: new Two(), version: "2" },
      ],
    });
    assert.equal(ok.registeredServices.filter((s) => s.name === "dup.Svc").length, 2);
  });

  it("a class instead of an instance", () => {
    assert.throws(
      () => createServer({ services: [InventoryService as unknown as object] }),
      /register\(\) takes an instance, not a class: pass new InventoryService\(\) instead of InventoryService/,
    );
  });

  it("@Param() on a CallContext suggests @Ctx()", () => {
    @Service("ctx.Wrong")
    class Wrong {
      @Method() m(@Param() ctx: CallContext): string {
        return ctx.method.name;
      }
    }
    assert.throws(() => createServer({ services: [new Wrong()] }), /decorate it with @Ctx\(\) instead of @Param\(\)/);
  });

  it("server.url before listen() says to await listen()", () => {
    const server = createServer({ services: [new InventoryService()] });
    assert.throws(() => server.url, /not listening yet: await server\.listen\(\)/);
  });

  it("a required parameter after an optional unnamed one", () => {
    @Service("order.Bad")
    class Bad {
      @Method() m(@Param({ type: String, optional: true }) a: string | undefined, @Param({ type: String }) b: string): string {
        return `${a}${b}`;
      }
    }
    assert.throws(() => createServer({ services: [new Bad()] }), /parameter #2 is required but follows an optional one/);
  });

  it("an array whose element type only the signature knows (metadata says Array): parameter or field", () => {
    @Service("arr.Param")
    class ArrParam {
      @Method() tag(@Param("tags") tags: string[]): number {
        return tags.length;
      }
    }
    assert.throws(
      () => createServer({ services: [new ArrParam()], health: false }),
      /^TypeError: ArrParam\.tag parameter #1 \(tags\): an array without an element type \(the compiler's metadata says only Array, not what it holds\)\. Declare it: @Param\(\{ name: "tags", type: \[String\] \}\)/,
    );
    class Post {
      @Field() tags!: string[];
    }
    @Service("arr.Field")
    class ArrField {
      @Method() post(@Param("post") p: Post): number {
        return p.tags.length;
      }
    }
    assert.throws(() => createServer({ services: [new ArrField()], health: false }), /Post\.tags: an array without an element type .*@Field\(\[String\]\)/);
    // Declared, it is taken: the element type is checked.
    @Service("arr.Ok")
    class ArrOk {
      @Method() tag(@Param({ name: "tags", type: [String] }) tags: string[]): number {
        return tags.length;
      }
    }
    assert.ok(createServer({ services: [new ArrOk()], health: false }));
  });

  it("a declared type that contradicts the metadata: parameter or field; Object declared is taken", () => {
    @Service("contra.Param")
    class ContraParam {
      @Method() n(@Param({ name: "n", type: Number }) n: string): string {
        return n;
      }
    }
    assert.throws(
      () => createServer({ services: [new ContraParam()], health: false }),
      /^TypeError: ContraParam\.n parameter #1 \(n\): the declared type \(number\) contradicts the TypeScript type the compiler emitted \(String\); make the declaration and the signature agree/,
    );
    class Row {
      // @ts-expect-error: the compile-time check refuses it too (declared Date, property string)
      @Field(Date) at!: string;
    }
    @Service("contra.Field")
    class ContraField {
      @Method() row(@Param("row") r: Row): string {
        return r.at;
      }
    }
    assert.throws(
      () => createServer({ services: [new ContraField()], health: false }),
      /Row\.at: the declared type \(date\) contradicts the TypeScript type the compiler emitted \(String\)/,
    );
    @Service("contra.Ok")
    class Loose {
      @Method() any(@Param({ name: "v", type: Object }) v: string, @Param({ name: "f", type: InMemoryFile }) f: Uint8Array): string {
        return `${v}${f.length}`;
      }
    }
    assert.ok(createServer({ services: [new Loose()], health: false }));
  });
});

describe("client-side checks of declared results", () => {
  it("a result that does not match the declaration is an internal error naming the method", async () => {
    @Service("lie.Service")
    class Liar {
      @Method({ returns: Date })
      async when(): Promise<Date> {
        return "not a date" as unknown as Date;
      }
    }
    const server = createServer({ services: [new Liar()] });
    await server.listen({ port: 0 });
    const client = createClient(Liar, { providers: server.url, cluster: "failfast" });
    try {
      await assert.rejects(client.when(), (e: RpcError) => {
        assert.match(e.message, /does not match the declared result of \/lie\.Service\/when/);
        return true;
      });
    } finally {
      closeClient(client);
      await server.close();
    }
  });
});
