import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Code as ConnectCode, ConnectError, createClient as createConnectClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createFileRegistry, type DescService, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import * as protobuf from "protobufjs";
import {
  badRequestViolations,
  ClientStream,
  closeClient,
  Code,
  createClient,
  createServer,
  Field,
  Method,
  Param,
  RpcError,
  Service,
  toProto,
  type TripleServer,
} from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { violationsOf } from "./peer.js";
import { ShopService } from "./shop.js";

@Service("validation.Labels")
class LabelService {
  calls = 0;

  @Method()
  label(@Param({ name: "code", type: String, pattern: "^[a-z]+$", maxLength: 4 }) code: string, @Param({ name: "n", type: Number, min: 1 }) n: number): string {
    this.calls++;
    return `${code}${n}`;
  }

  @ClientStream()
  async sum(@Param({ type: Number, min: 0 }) nums: AsyncIterable<number>): Promise<number> {
    this.calls++;
    let total = 0;
    for await (const n of nums) total += n;
    return total;
  }

  @Method({ idempotent: true })
  lookup(@Param({ name: "id", type: String, format: "uuid" }) id: string): string {
    this.calls++;
    return id;
  }

  /** Constraints declared the standard-decorator way, on `@Method({ params })`. */
  @Method({ params: [{ name: "tags", type: [String], minItems: 1, enum: ["a", "b"] }] })
  tagged(tags: string[]): number {
    this.calls++;
    return tags.length;
  }
}

async function rejection(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof RpcError, String(e));
    return e;
  }
  assert.fail("the call succeeded");
}

describe("validation: typed clients on every protocol, the Dubbo wrapper, request streams", () => {
  let server: TripleServer;
  const labels = new LabelService();
  before(async () => {
    server = createServer({ services: [labels] });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  const expected = {
    // Per value: bounds, lengths, pattern, enum, format, in that order.
    message: "parameter #1 (code) must be at most 4 characters long; parameter #1 (code) must match ^[a-z]+$; parameter #2 (n) must be at least 1",
    violations: [
      { field: "code", description: "must be at most 4 characters long" },
      { field: "code", description: "must match ^[a-z]+$" },
      { field: "n", description: "must be at least 1" },
    ],
  };

  const options = [
    { protocol: "triple" as const },
    { protocol: "triple" as const, httpVersion: "1.1" as const },
    { protocol: "grpc" as const },
    { protocol: "connect" as const },
    { protocol: "grpc-web" as const },
    { serialization: "hessian2" as const },
    { serialization: "fastjson2" as const },
  ];
  for (const o of options) {
    it(`the client gets invalid_argument with BadRequest violations: ${JSON.stringify(o)}`, async () => {
      const client = createClient(LabelService, { providers: [server.url], retries: 0, ...o });
      try {
        const before = labels.calls;
        const e = await rejection(client.label("ABCDEF", 0));
        assert.equal(e.code, Code.InvalidArgument);
        assert.equal(e.rawMessage, expected.message);
        assert.deepEqual(badRequestViolations(e), expected.violations);
        assert.equal(labels.calls, before, "the handler never ran");
        assert.equal(await client.label("abc", 2), "abc2");
      } finally {
        closeClient(client);
      }
    });
  }

  it("ProtoJSON clients (Connect JSON, gRPC JSON) send a required value that holds its default, so the server does not read it as missing", async () => {
    const shopServer = createServer({ services: [new ShopService()] });
    await shopServer.listen({ port: 0 });
    try {
      for (const o of [{ protocol: "connect" as const }, { protocol: "grpc" as const, contentType: "grpc+json" as const }]) {
        const client = createClient(ShopService, { providers: [shopServer.url], retries: 0, ...o });
        try {
          assert.equal(await client.resize("", 0), ":0", JSON.stringify(o));
        } finally {
          closeClient(client);
        }
      }
    } finally {
      await shopServer.close();
    }
  });

  it("constraints given in @Method({ params }) apply to each array element and to the array", async () => {
    const client = createClient(LabelService, { providers: [server.url], retries: 0 });
    try {
      const e = await rejection(client.tagged(["a", "c"]));
      assert.deepEqual(badRequestViolations(e), [{ field: "tags[1]", description: 'must be one of "a", "b"' }]);
      const empty = await rejection(client.tagged([]));
      assert.deepEqual(badRequestViolations(empty), [{ field: "tags", description: "must have at least 1 elements" }]);
      assert.equal(await client.tagged(["a", "b"]), 2);
    } finally {
      closeClient(client);
    }
  });

  it("a client stream: each message is validated as the handler reads it; the first bad one ends the call", async () => {
    const client = createClient(LabelService, { providers: [server.url], retries: 0, protocol: "grpc" });
    try {
      async function* nums(list: number[]) {
        yield* list;
      }
      assert.equal(await client.sum(nums([1, 2, 3])), 6);
      const e = await rejection(client.sum(nums([1, -2, 3])));
      assert.equal(e.code, Code.InvalidArgument);
      assert.equal(e.rawMessage, "parameter #1 must be at least 0");
      assert.deepEqual(badRequestViolations(e), [{ field: "arg1", description: "must be at least 0" }]);
    } finally {
      closeClient(client);
    }
  });

  it("Connect GET (an idempotent method) is validated like POST", async () => {
    const before = labels.calls;
    const get = (id: string) =>
      post1(server.url, `/validation.Labels/lookup?connect=v1&encoding=json&message=${encodeURIComponent(JSON.stringify({ id }))}`, { method: "GET" });
    const bad = await get("nope");
    assert.equal(bad.status, 400, bad.text());
    assert.equal(bad.json().code, "invalid_argument");
    assert.equal(bad.json().message, "parameter #1 (id) must be a UUID");
    assert.equal(bad.json().details[0].type, "google.rpc.BadRequest");
    assert.equal(labels.calls, before);
    const good = await get("123e4567-e89b-12d3-a456-426614174000");
    assert.equal(good.status, 200, good.text());
  });

  it("Triple HTTP answers 400 with the violations in the JSON body's details", async () => {
    const r = await post1(server.url, "/validation.Labels/label", { headers: { "content-type": "application/json" }, body: '["ab1",5]' });
    assert.equal(r.status, 400);
    const body = r.json();
    assert.equal(body.code, "invalid_argument");
    assert.equal(body.status, 40);
    assert.equal(body.message, "parameter #1 (code) must match ^[a-z]+$");
    assert.equal(body.details[0].type, "google.rpc.BadRequest");
  });
});

describe("validation: registration refuses constraints that cannot apply", () => {
  const cases: [string, () => unknown, RegExp][] = [
    ["pattern on a number", () => Field({ type: Number, pattern: "^1$" }), /Bad\.x: pattern applies to strings \(or arrays of strings\), not to a number/],
    [
      "min on a string",
      () => Field({ type: String, min: 1 }),
      /Bad\.x: min applies to numbers, bigints and dates, not to a string; use minLength\/maxLength for lengths/,
    ],
    ["an invalid pattern", () => Field({ type: String, pattern: "([a-z" }), /Bad\.x: pattern "\(\[a-z" is not a valid regular expression/],
    ["enum values of another type", () => Field({ type: Number, enum: ["a"] }), /Bad\.x: enum of a number lists string a; list number values only/],
    ["an unknown format", () => Field({ type: String, format: "phone" as never }), /Bad\.x: format must be one of email, uuid, uri, date-time, got "phone"/],
    ["minLength over maxLength", () => Field({ type: String, minLength: 5, maxLength: 2 }), /Bad\.x: minLength 5 is greater than maxLength 2/],
    ["maxItems on a string", () => Field({ type: String, maxItems: 2 }), /Bad\.x: maxItems applies to arrays and maps, not to a string/],
    ["a negative length", () => Field({ type: String, maxLength: -1 }), /Bad\.x: maxLength must be a whole number >= 0, got -1/],
  ];
  for (const [what, decorator, message] of cases) {
    it(what, () => {
      class Bad {
        x!: unknown;
      }
      (decorator() as (t: object, k: string) => void)(Bad.prototype, "x");
      @Service("validation.Bad")
      class BadService {
        @Method()
        m(@Param({ type: Bad }) _b: Bad): void {}
      }
      assert.throws(() => createServer({ services: [new BadService()] }), message);
    });
  }

  it("constraints on a .proto method's parameter are refused (its rules belong in the .proto)", () => {
    const root = protobuf.parse(`syntax = "proto3"; package v; message R { string s = 1; } service P { rpc Call (R) returns (R); }`).root;
    @Service("v.P", { proto: root })
    class ProtoBound {
      @Method()
      call(@Param({ type: Object, minLength: 1 }) r: unknown): unknown {
        return r;
      }
    }
    assert.throws(
      () => createServer({ services: [new ProtoBound()] }),
      /validation constraints apply to IDL-less methods; Call takes its \.proto's request message/,
    );
  });

  it("a parameter's constraint is checked against its type, naming the method and the parameter", () => {
    @Service("validation.BadParam")
    class BadParam {
      @Method()
      m(@Param({ name: "when", type: Date, min: "not a date" }) _w: Date): void {}
    }
    assert.throws(
      () => createServer({ services: [new BadParam()] }),
      /BadParam\.m parameter #1 \(when\): min of a date must be a Date, ISO 8601 text or epoch milliseconds, got not a date/,
    );
  });
});

/** The FileDescriptorProtos server reflection gives for `symbol` (one request on a v1 stream, through @grpc/grpc-js). */
async function reflected(url: string, symbol: string): Promise<any[]> {
  const dir = mkdtempSync(join(tmpdir(), "validation-reflection-"));
  try {
    const file = join(dir, "reflection.proto");
    writeFileSync(
      file,
      `syntax = "proto3";
package grpc.reflection.v1;
service ServerReflection { rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse); }
message ServerReflectionRequest { string host = 1; oneof message_request { string file_by_filename = 3; string file_containing_symbol = 4; } }
message ServerReflectionResponse { string valid_host = 1; oneof message_response { FileDescriptorResponse file_descriptor_response = 4; ErrorResponse error_response = 7; } }
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ErrorResponse { int32 error_code = 1; string error_message = 2; }
`,
    );
    const def = loader.loadSync(file, { keepCase: true, oneofs: true });
    const Ctor = (grpc.loadPackageDefinition(def) as any).grpc.reflection.v1.ServerReflection;
    const client = new Ctor(new URL(url).host, grpc.credentials.createInsecure());
    const call = client.ServerReflectionInfo();
    const reply: any = await new Promise((resolve, reject) => {
      call.on("data", resolve);
      call.on("error", reject);
      call.write({ file_containing_symbol: symbol });
    });
    call.end();
    client.close();
    return reply.file_descriptor_response.file_descriptor_proto.map((b: Buffer) => fromBinary(FileDescriptorProtoSchema, b));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A connect-es registry of the shop service's file as reflection describes it. */
async function shopRegistry(url: string) {
  const protos = await reflected(url, "validation.Shop");
  const shop = protos.find((p: any) => p.package === "validation");
  const wkt = await import("@bufbuild/protobuf/wkt");
  return {
    shop,
    registry: createFileRegistry(
      create(FileDescriptorSetSchema, { file: [wkt.file_google_protobuf_timestamp.proto, wkt.file_google_protobuf_struct.proto, shop] }),
    ),
  };
}

describe("validation: constraints in the exported .proto and in reflection", () => {
  it("the exported .proto carries each field's description and constraints as comments", () => {
    const text = toProto(ShopService);
    assert.match(text, /\n {2}\/\/ stock keeping unit\n {2}\/\/ validate: pattern = "\^\[A-Z\]\{2\}-\\\\d\+\$"\n {2}string sku = 1;\n/);
    assert.match(text, /\n {2}\/\/ validate: min = 1, max = 100\n {2}double qty = 2;\n/);
    assert.match(text, /\n {2}\/\/ validate: minItems = 2, maxItems = 3, pattern = "\^\[a-z\]\+\$"\n {2}repeated string tags = 3;\n/);
    assert.match(text, /\n {2}\/\/ validate: enum = \["eu", "us"\]\n {2}string region = 2;\n/);
  });

  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new ShopService()], reflection: true });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("server reflection reports the same comments (source_code_info), and the file stays valid for strict registries", async () => {
    const { shop, registry } = await shopRegistry(server.url);
    const mi = shop.messageType.findIndex((m: any) => m.name === "Item");
    const comment = (field: string) => {
      const fi = shop.messageType[mi].field.findIndex((f: any) => f.name === field);
      return shop.sourceCodeInfo?.location.find((l: any) => l.path.join() === [4, mi, 2, fi].join())?.leadingComments;
    };
    assert.equal(comment("sku"), ' stock keeping unit\n validate: pattern = "^[A-Z]{2}-\\\\d+$"\n');
    assert.equal(comment("qty"), " validate: min = 1, max = 100\n");
    assert.equal(comment("tags"), ' validate: minItems = 2, maxItems = 3, pattern = "^[a-z]+$"\n');
    // Strict: @bufbuild/protobuf built a registry from the file (its dependencies are well-known types).
    assert.ok(registry.getMessage("validation.Item"));
  });
});

describe("validation: a connect-es client (@connectrpc/connect-node) built from the served schema", () => {
  let server: TripleServer;
  let shop: ShopService;
  let service: DescService;
  before(async () => {
    shop = new ShopService();
    server = createServer({ services: [shop] });
    await server.listen({ port: 0 });
    service = (await shopRegistry(server.url)).registry.getService("validation.Shop")!;
  });
  after(() => server.close());

  /** JSON unless told otherwise (connect-node's default is binary; connect-web's, JSON). */
  const client = (options: { useBinaryFormat?: boolean; jsonOptions?: { alwaysEmitImplicit?: boolean } } = {}): any =>
    createConnectClient(service, createConnectTransport({ baseUrl: server.url, httpVersion: "2", useBinaryFormat: false, ...options }));

  async function connectError(p: Promise<unknown>): Promise<ConnectError> {
    try {
      await p;
    } catch (e) {
      return ConnectError.from(e);
    }
    assert.fail("the call succeeded");
  }

  for (const binary of [false, true]) {
    it(`a violation arrives as invalid_argument with its BadRequest detail (${binary ? "binary" : "JSON"})`, async () => {
      const before = shop.calls;
      const e = await connectError(client({ useBinaryFormat: binary }).place({ item: { sku: "bad", qty: 2 }, region: "asia" }));
      assert.equal(e.code, ConnectCode.InvalidArgument);
      assert.equal(e.rawMessage, 'parameter #1 (item).sku must match ^[A-Z]{2}-\\d+$; parameter #2 (region) must be one of "eu", "us"');
      const detail = e.details.find((d: any) => d.type === "google.rpc.BadRequest") as { value: Uint8Array } | undefined;
      assert.deepEqual(violationsOf(detail!.value), [
        ["item.sku", "must match ^[A-Z]{2}-\\d+$"],
        ["region", 'must be one of "eu", "us"'],
      ]);
      assert.equal(shop.calls, before);
    });
  }

  it("required defaults: ProtoJSON that leaves out a default is missing; alwaysEmitImplicit or the binary format send it (docs/http-api.md, Validation)", async () => {
    const omitted = await connectError(client().resize({ id: "x", width: 0 }));
    assert.equal(omitted.code, ConnectCode.InvalidArgument);
    assert.equal(omitted.rawMessage, "parameter #2 (width) is missing");
    // The result is a google.protobuf.Value: protobuf-es gives { kind: { case: "stringValue", value } }.
    const text = (r: any) => r.value?.kind?.value;
    assert.equal(text(await client({ jsonOptions: { alwaysEmitImplicit: true } }).resize({ id: "x", width: 0 })), "x:0");
    assert.equal(text(await client({ useBinaryFormat: true }).resize({ id: "x", width: 0 })), "x:0");
    assert.equal(text(await client().resize({ id: "x", width: 3 })), "x:3");
  });
});
