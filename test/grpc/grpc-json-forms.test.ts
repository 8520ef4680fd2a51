import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { createClient as createConnectClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as protobuf from "protobufjs";
import { closeClient, createClient, createServer, Field, Method, Param, Service, T, toProtoFiles, type TripleServer } from "../../src/index.js";
import { descriptorSetBytes } from "../interop/connect-descriptors.js";
import { frame, rawCall } from "./raw.js";

class Pet {
  @Field() name!: string;
  @Field() age!: number;
}

@Service("forms.FormsService")
class FormsService {
  @Method({ returns: String })
  async hello(@Param("name") name: string): Promise<string> {
    return `hi ${name}`;
  }

  @Method({ returns: Number })
  async add(@Param("a") a: number, @Param("b") b: number): Promise<number> {
    return a + b;
  }

  @Method({ returns: Pet })
  async older(@Param({ name: "pet", type: Pet }) pet: Pet): Promise<Pet> {
    return { name: pet.name, age: pet.age + 1 };
  }
}

/**
 * `application/grpc+json` on IDL-less methods: ProtoJSON of the advertised (derived) schema for
 * callers that send it, as connect-es's gRPC transport in JSON mode does with descriptors from our
 * `.proto` export; Dubbo's plain JSON (arrays, bare values) for callers that send that.
 */
describe("application/grpc+json on IDL-less methods: the form of the request", () => {
  let server: TripleServer;
  let session: http2.ClientHttp2Session;
  before(async () => {
    server = createServer({ services: [new FormsService()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    session = http2.connect(server.url);
  });
  after(async () => {
    session.close();
    await server.close();
  });

  it("connect-es's gRPC transport in JSON mode, built from toProto's export, calls every method", async () => {
    const [file] = toProtoFiles(FormsService);
    const root = new protobuf.Root();
    protobuf.parse(file.text, root, { keepCase: true });
    const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, descriptorSetBytes(root, file.name)));
    const service = registry.getService("forms.FormsService");
    assert.ok(service);
    const client = createConnectClient(service, createGrpcTransport({ baseUrl: server.url, useBinaryFormat: false })) as any;
    assert.equal((await client.hello({ name: "ann" })).value, "hi ann");
    assert.equal((await client.add({ a: 2, b: 3 })).value, 5);
    const pet = await client.older({ pet: { name: "rex", age: 3 } });
    assert.deepEqual([pet.name, pet.age], ["rex", 4]);
  });

  const json = async (path: string, body: string) => {
    const r = await rawCall(session, path, [frame(body)], { "content-type": "application/grpc+json" });
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    return JSON.parse(r.messages[0].payload.toString("utf8"));
  };

  it("ProtoJSON in, ProtoJSON out", async () => {
    assert.deepEqual(await json("/forms.FormsService/hello", '{"name":"ann"}'), { value: "hi ann" });
    assert.deepEqual(await json("/forms.FormsService/add", '{"a":2,"b":3}'), { value: 5 });
  });

  it("Dubbo's arrays and bare values in, plain JSON out", async () => {
    assert.equal(await json("/forms.FormsService/hello", '["ann"]'), "hi ann");
    assert.equal(await json("/forms.FormsService/hello", '"ann"'), "hi ann");
    assert.equal(await json("/forms.FormsService/add", "[2,3]"), 5);
    // A bare class argument names none of the request message's fields (its field is `pet`).
    assert.deepEqual(await json("/forms.FormsService/older", '{"name":"rex","age":3}'), { name: "rex", age: 4 });
  });

  it("our client (grpc+json sends Dubbo's arrays) still gets plain results", async () => {
    const c = createClient(FormsService, { providers: [server.url], protocol: "grpc", contentType: "grpc+json" });
    try {
      assert.equal(await c.hello("ann"), "hi ann");
      assert.equal(await c.add(2, 3), 5);
    } finally {
      closeClient(c);
    }
  });
});

class Tick {
  @Field(T.int64) count!: number;
  @Field(String) note!: string;
}

@Service("forms.StreamForms")
class StreamForms {
  /** A stream of decorated-class elements in, one number out. */
  @Method({ kind: "client_streaming", returns: Number })
  async total(@Param({ name: "ticks", type: Tick }) ticks: AsyncIterable<Tick>): Promise<number> {
    let n = 0;
    for await (const t of ticks) n += t.count;
    return n;
  }

  /** A stream of decorated-class elements in, a running total out. */
  @Method({ kind: "bidi_streaming", returns: Number })
  async *running(@Param({ name: "ticks", type: Tick }) ticks: AsyncIterable<Tick>): AsyncGenerator<number> {
    let n = 0;
    for await (const t of ticks) yield (n += t.count);
  }
}

/**
 * One rule for application/grpc+json on every call kind: ProtoJSON of the derived messages, as
 * unary calls, server streams and Connect JSON have it. Client and bidi streams of decorated-class
 * elements used to be read as Dubbo's plain JSON (int64 "5" refused, the reply a bare 5).
 */
describe("application/grpc+json on IDL-less client and bidi streams: ProtoJSON of the derived messages", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new StreamForms()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  async function* ticks(...counts: number[]) {
    for (const c of counts) yield { count: BigInt(c), note: `n${c}` };
  }

  it("connect-es's gRPC transport in JSON mode, from toProto's export: client stream and bidi", async () => {
    const [file] = toProtoFiles(StreamForms);
    const root = new protobuf.Root();
    protobuf.parse(file.text, root, { keepCase: true });
    const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, descriptorSetBytes(root, file.name)));
    const service = registry.getService("forms.StreamForms");
    assert.ok(service);
    const client = createConnectClient(service, createGrpcTransport({ baseUrl: server.url, useBinaryFormat: false })) as any;
    const total = await client.total(ticks(2, 3));
    assert.equal(Number(total.value), 5);
    const got: number[] = [];
    for await (const m of client.running(ticks(1, 2, 3))) got.push(Number(m.value));
    assert.deepEqual(got, [1, 3, 6]);
  });

  it("our client (default options: streams as grpc+json) still gets plain results", async () => {
    const c = createClient(StreamForms, { providers: [server.url] });
    try {
      async function* plain(...counts: number[]) {
        for (const n of counts) yield Object.assign(new Tick(), { count: n, note: "x" });
      }
      assert.equal(await c.total(plain(2, 3)), 5);
      const got: number[] = [];
      for await (const n of c.running(plain(1, 2))) got.push(n);
      assert.deepEqual(got, [1, 3]);
    } finally {
      closeClient(c);
    }
  });
});
