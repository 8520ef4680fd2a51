import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { create, createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import * as protobuf from "protobufjs";
import { createServer, describeService, toProto, type TripleServer } from "../../src/index.js";
import { buildDescriptorIndex } from "../../src/schema/descriptor.js";
import { deriveSchema } from "../../src/schema/derive.js";
import { toProtobufRoot } from "../../src/schema/protobufjs.js";
import { decodeResponseWrapper, encodeRequestWrapper } from "../../src/message/wrapper.js";
import { frame, rawCall } from "../grpc/raw.js";
import { InventoryService } from "./inventory-service.js";

/**
 * The derived schema as connect-es sees it: the FileDescriptorProtos reflection serves (protobufjs's
 * own toDescriptor writes relative type names, which @bufbuild/protobuf rightly refuses).
 */
function inventoryDesc() {
  const { files } = deriveSchema([describeService(InventoryService)]);
  const fileOf = new Map(files.flatMap((f) => [...f.messages, ...f.services].map((m) => [m.fullName, f.name] as const)));
  const index = buildDescriptorIndex([{ root: toProtobufRoot(files), fileOf: (n) => fileOf.get(n) }]);
  const order = ["google/protobuf/struct.proto", "google/protobuf/timestamp.proto", "inventory/inventory_service.proto"];
  const set = create(FileDescriptorSetSchema, { file: order.map((n) => fromBinary(FileDescriptorProtoSchema, index.files.get(n)!)) });
  return createFileRegistry(set).getService("inventory.InventoryService")!;
}

/** The derived GreetResponse, to read a plain reply. */
function greetResponse(): protobuf.Type {
  const dir = mkdtempSync(join(tmpdir(), "triple-wrapper-"));
  try {
    const file = join(dir, "inventory.proto");
    writeFileSync(file, toProto(InventoryService));
    return protobuf.loadSync(file).lookupType("inventory.GreetResponse");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("plain protobuf and Dubbo's wrapper on one IDL-less method", () => {
  let server: TripleServer;
  let session: http2.ClientHttp2Session;
  before(async () => {
    server = createServer({ services: [new InventoryService()] });
    await server.listen({ port: 0 });
    session = http2.connect(server.url);
  });
  after(async () => {
    session.close();
    await server.close();
  });

  it("connect-es's gRPC transport (application/grpc+proto, plain messages) is not taken for the wrapper", async () => {
    const client = createClient(inventoryDesc(), createGrpcTransport({ baseUrl: server.url })) as any;
    const r = await client.greet({ name: "connect" });
    assert.equal(r.value.kind.value, "hello connect");
    const adj = await client.adjustStock({ sku: "json2", delta: 1 });
    assert.equal(adj.value.kind.value.fields.sku.kind.value, "json2");
  });

  it("a Dubbo-style wrapper (json, argTypes, +proto) gets a TripleResponseWrapper back", async () => {
    const wrapper = encodeRequestWrapper({
      serializeType: "json",
      args: [Buffer.from('"A1"'), Buffer.from("-1"), Buffer.from('"damaged"')],
      argTypes: ["java.lang.String", "java.lang.Double", "java.lang.String"],
    });
    const r = await rawCall(session, "/inventory.InventoryService/adjustStock", [frame(wrapper)], {
      "content-type": "application/grpc+proto",
      "tri-consumer-appname": "java-consumer",
    });
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    const w = decodeResponseWrapper(r.messages[0].payload);
    assert.equal(w.serializeType, "json");
    assert.deepEqual(JSON.parse(Buffer.from(w.data).toString()), { sku: "A1", delta: -1, reason: "damaged" });
  });

  it("a dubbo-go style wrapper with fewer arguments leaves trailing optional parameters undefined", async () => {
    const wrapper = encodeRequestWrapper({ serializeType: "json", args: [Buffer.from('"B2"'), Buffer.from("3")], argTypes: ["string", "float64"] });
    const r = await rawCall(session, "/inventory.InventoryService/adjustStock", [frame(wrapper)], {
      "content-type": "application/grpc+proto",
      "user-agent": "grpc-go-triple/3.3.0 (go1.22)",
    });
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    assert.deepEqual(JSON.parse(Buffer.from(decodeResponseWrapper(r.messages[0].payload).data).toString()), { sku: "B2", delta: 3, reason: null });
  });

  it("a wrapper in a serialization the server cannot read is unimplemented, naming it", async () => {
    const wrapper = encodeRequestWrapper({ serializeType: "kryo", args: [Buffer.from([0x01])], argTypes: ["java.lang.String"] });
    const r = await rawCall(session, "/inventory.InventoryService/Greet", [frame(wrapper)], { "content-type": "application/grpc+proto" });
    assert.equal(r.grpcStatus, 12);
    assert.match(r.grpcMessage ?? "", /unsupported serializeType "kryo"/);
  });

  it("a plain message whose first field merely looks like a serialization name stays plain", async () => {
    // GreetRequest { name = "json" }: field 1, length-delimited, text "json" — but no args/argTypes shape beyond it.
    const plain = Buffer.from([0x0a, 0x04, ...Buffer.from("json")]);
    const r = await rawCall(session, "/inventory.InventoryService/Greet", [frame(plain)], { "content-type": "application/grpc" });
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    // A wrapper needs at least the required argument; this has none, so it is plain GreetRequest.
    const reply = greetResponse().decode(r.messages[0].payload) as unknown as { value: { stringValue: string } };
    assert.equal(reply.value.stringValue, "hello json");
  });
});
