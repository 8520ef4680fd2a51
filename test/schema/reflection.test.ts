import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { create, createFileRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import * as protobuf from "protobufjs";
import "protobufjs/ext/descriptor";
import { createServer, type TripleServer } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { unary } from "../grpc/grpc-js-client.js";
import { InventoryService } from "./inventory-service.js";

/** The reflection protocol as grpc/grpc-proto publishes it (v1; v1alpha differs only in its package). */
const REFLECTION_PROTO = (pkg: string) => `syntax = "proto3";
package grpc.reflection.${pkg};
service ServerReflection {
  rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse);
}
message ServerReflectionRequest {
  string host = 1;
  oneof message_request {
    string file_by_filename = 3;
    string file_containing_symbol = 4;
    ExtensionRequest file_containing_extension = 5;
    string all_extension_numbers_of_type = 6;
    string list_services = 7;
  }
}
message ExtensionRequest { string containing_type = 1; int32 extension_number = 2; }
message ServerReflectionResponse {
  string valid_host = 1;
  ServerReflectionRequest original_request = 2;
  oneof message_response {
    FileDescriptorResponse file_descriptor_response = 4;
    ExtensionNumberResponse all_extension_numbers_response = 5;
    ListServiceResponse list_services_response = 6;
    ErrorResponse error_response = 7;
  }
}
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ExtensionNumberResponse { string base_type_name = 1; repeated int32 extension_number = 2; }
message ListServiceResponse { repeated ServiceResponse service = 1; }
message ServiceResponse { string name = 1; }
message ErrorResponse { int32 error_code = 1; string error_message = 2; }
`;

const dir = mkdtempSync(join(tmpdir(), "triple-reflection-"));

function reflectionClient(pkg: "v1" | "v1alpha", address: string): any {
  const file = join(dir, `reflection-${pkg}.proto`);
  writeFileSync(file, REFLECTION_PROTO(pkg));
  const def = loader.loadSync(file, { keepCase: true, longs: String, defaults: false, oneofs: true });
  const Ctor = (grpc.loadPackageDefinition(def) as any).grpc.reflection[pkg].ServerReflection;
  return new Ctor(address, grpc.credentials.createInsecure());
}

/** One reflection stream, many requests in order (as grpcurl uses it). */
class ReflectionStream {
  private readonly call: grpc.ClientDuplexStream<any, any>;
  private readonly waiting: ((r: any) => void)[] = [];
  readonly ended: Promise<grpc.StatusObject>;
  constructor(client: any) {
    this.call = client.ServerReflectionInfo();
    this.call.on("data", (r: any) => this.waiting.shift()?.(r));
    this.ended = new Promise((resolve) => this.call.on("status", resolve));
    this.call.on("error", () => {});
  }
  ask(req: object): Promise<any> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.call.write(req);
    });
  }
  end(): void {
    this.call.end();
  }
}

/** What grpcurl does: the symbol's file, then `file_by_filename` for each dependency it lacks. */
async function resolveSymbol(s: ReflectionStream, symbol: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const add = (r: any) => {
    assert.equal(r.message_response, "file_descriptor_response", JSON.stringify(r.error_response));
    for (const b of r.file_descriptor_response.file_descriptor_proto) {
      const fd = fromBinary(FileDescriptorProtoSchema, b);
      files.set(fd.name, b);
    }
  };
  add(await s.ask({ file_containing_symbol: symbol }));
  for (let progress = true; progress; ) {
    progress = false;
    for (const b of [...files.values()]) {
      for (const dep of fromBinary(FileDescriptorProtoSchema, b).dependency) {
        if (files.has(dep)) continue;
        add(await s.ask({ file_by_filename: dep }));
        progress = true;
      }
    }
  }
  return files;
}

/** Files in dependency order, as strict registries want them. */
function ordered(files: Map<string, Buffer>): Buffer[] {
  const out: Buffer[] = [];
  const done = new Set<string>();
  const visit = (name: string) => {
    if (done.has(name)) return;
    done.add(name);
    for (const d of fromBinary(FileDescriptorProtoSchema, files.get(name)!).dependency) visit(d);
    out.push(files.get(name)!);
  };
  for (const name of files.keys()) visit(name);
  return out;
}

describe("gRPC server reflection", () => {
  let server: TripleServer;
  let address: string;
  before(async () => {
    server = createServer({ services: [new InventoryService(), new GreetServiceImpl()] });
    address = `127.0.0.1:${(await server.listen({ port: 0 })).port}`;
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const pkg of ["v1", "v1alpha"] as const) {
    it(`${pkg}: lists every service, reflection and health included`, async () => {
      const client = reflectionClient(pkg, address);
      const s = new ReflectionStream(client);
      try {
        const r = await s.ask({ list_services: "*" });
        const names = r.list_services_response.service.map((x: { name: string }) => x.name);
        for (const n of ["inventory.InventoryService", "greet.GreetService", "grpc.health.v1.Health", `grpc.reflection.${pkg}.ServerReflection`]) {
          assert.ok(names.includes(n), `${n} in ${names}`);
        }
      } finally {
        s.end();
        client.close();
      }
    });
  }

  it("an unknown symbol is NOT_FOUND in-band, and the stream stays usable", async () => {
    const client = reflectionClient("v1", address);
    const s = new ReflectionStream(client);
    try {
      const r = await s.ask({ file_containing_symbol: "no.Such" });
      assert.equal(r.error_response.error_code, grpc.status.NOT_FOUND);
      const again = await s.ask({ list_services: "" });
      assert.ok(again.list_services_response.service.length > 0);
      s.end();
      assert.equal((await s.ended).code, grpc.status.OK);
    } finally {
      client.close();
    }
  });

  it("the descriptors are strict-valid and a grpc-js client built from them alone calls an IDL-less method", async () => {
    const client = reflectionClient("v1", address);
    const s = new ReflectionStream(client);
    let files: Map<string, Buffer>;
    try {
      files = await resolveSymbol(s, "inventory.InventoryService");
    } finally {
      s.end();
      client.close();
    }
    assert.ok(files.has("inventory/inventory_service.proto"));
    assert.ok(files.has("google/protobuf/timestamp.proto"), "the well-known types come under their canonical names");
    const set = create(FileDescriptorSetSchema, { file: ordered(files).map((b) => fromBinary(FileDescriptorProtoSchema, b)) });
    const registry = createFileRegistry(set);
    const report = registry.getMessage("inventory.Report");
    assert.ok(report, "inventory.Report resolves in a strict registry");
    assert.equal(report.field.counts.fieldKind, "map");
    assert.equal(registry.getMessage("inventory.AdjustStockRequest")?.field.reason.proto.proto3Optional, true);
    const methods = registry.getService("inventory.InventoryService")?.methods ?? [];
    assert.equal(methods.find((m) => m.name === "report")?.idempotency, MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS);
    assert.equal(methods.find((m) => m.name === "adjustStock")?.idempotency, MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN);

    // A client from nothing but the reflected descriptors.
    const root = (protobuf.Root as unknown as { fromDescriptor(set: Uint8Array): protobuf.Root }).fromDescriptor(toBinary(FileDescriptorSetSchema, set));
    const def = loader.fromJSON(root.toJSON() as any, { keepCase: true, longs: String, defaults: true });
    const Ctor = (grpc.loadPackageDefinition(def) as any).inventory.InventoryService;
    const inv = new Ctor(address, grpc.credentials.createInsecure());
    try {
      const r = await unary(inv, "adjustStock", { sku: "Z9", delta: 4, reason: "audit" });
      assert.equal(r.error, undefined, r.error?.message);
      assert.equal(r.response.value.structValue.fields.reason.stringValue, "audit");
      const rep = await unary(inv, "report", { sku: "Z9" });
      assert.equal(rep.response.total, String(2n ** 60n));
    } finally {
      inv.close();
    }
  });

  it("a .proto-bound service is served from its own file", async () => {
    const client = reflectionClient("v1alpha", address);
    const s = new ReflectionStream(client);
    try {
      const files = await resolveSymbol(s, "greet.GreetService.Greet");
      assert.deepEqual([...files.keys()], ["greet.proto"]);
      const fd = fromBinary(FileDescriptorProtoSchema, files.get("greet.proto")!);
      assert.equal(fd.package, "greet");
      assert.ok(fd.service[0].method.some((m) => m.name === "Greet" && m.inputType === ".greet.GreetRequest"));
    } finally {
      s.end();
      client.close();
    }
  });

  it("reflection: false turns it off (UNIMPLEMENTED, so clients fall back)", async () => {
    const quiet = createServer({ services: [new InventoryService()], reflection: false });
    const a = await quiet.listen({ port: 0 });
    const client = reflectionClient("v1", `127.0.0.1:${a.port}`);
    const s = new ReflectionStream(client);
    try {
      s.ask({ list_services: "*" });
      assert.equal((await s.ended).code, grpc.status.UNIMPLEMENTED);
    } finally {
      client.close();
      await quiet.close();
    }
  });
});
