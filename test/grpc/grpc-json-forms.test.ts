import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { createClient as createConnectClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as protobuf from "protobufjs";
import { closeClient, createClient, createServer, Field, Method, Param, Service, toProtoFiles, type TripleServer } from "../../src/index.js";
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
