import * as assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fromBinary, toJson } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import * as protobuf from "protobufjs";
import { createServer, type TripleServer } from "../../src/index.js";
import { buildDescriptorIndex } from "../../src/schema/descriptor.js";
import { InventoryService } from "./inventory-service.js";

/** The well-known types protobufjs bundles (the ones our schemas can reference). */
const WKT = ["any", "duration", "timestamp", "empty", "struct", "wrappers", "field_mask"].map((n) => `google/protobuf/${n}.proto`);

const HAVE_PROTOC = spawnSync("protoc", ["--version"]).status === 0;
const dir = mkdtempSync(join(tmpdir(), "triple-wkt-"));

/**
 * protoc's descriptors of the WKT files (Debian's protobuf-compiler, installed by .ci/run, reads
 * them from /usr/include), by file name, as JSON of the decoded FileDescriptorProto. The set is
 * written without --include_source_info, so neither side has source_code_info; protoc fills
 * json_name and so do we (the bytes served are protoc's own), so nothing is left out of the
 * comparison.
 */
function protocDescriptors(): Map<string, unknown> {
  const out = join(dir, "wkt.pb");
  execFileSync("protoc", ["-I/usr/include", `--descriptor_set_out=${out}`, ...WKT], { stdio: "pipe" });
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(out));
  return new Map(set.file.map((f) => [f.name, toJson(FileDescriptorProtoSchema, f)]));
}

const asJson = (bytes: Uint8Array) => toJson(FileDescriptorProtoSchema, fromBinary(FileDescriptorProtoSchema, bytes));

/** Asks a server's reflection (v1) for one file by name. */
function fileByName(address: string, name: string): Promise<Buffer[]> {
  const file = join(dir, "reflection.proto");
  writeFileSync(
    file,
    `syntax = "proto3"; package grpc.reflection.v1;
service ServerReflection { rpc ServerReflectionInfo(stream Req) returns (stream Res); }
message Req { string host = 1; oneof message_request { string file_by_filename = 3; } }
message Res { oneof message_response { Files file_descriptor_response = 4; Err error_response = 7; } }
message Files { repeated bytes file_descriptor_proto = 1; }
message Err { int32 error_code = 1; string error_message = 2; }`,
  );
  const def = loader.loadSync(file, { keepCase: true, oneofs: true });
  const Ctor = (grpc.loadPackageDefinition(def) as any).grpc.reflection.v1.ServerReflection;
  const client = new Ctor(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on("data", (r: any) => {
      call.end();
      client.close();
      if (r.file_descriptor_response) resolve(r.file_descriptor_response.file_descriptor_proto);
      else reject(new Error(JSON.stringify(r.error_response)));
    });
    call.on("error", reject);
    call.write({ file_by_filename: name });
  });
}

describe("well-known types are described exactly as protoc describes them", { skip: !HAVE_PROTOC && !process.env.CI && "protoc is not installed" }, () => {
  let server: TripleServer;
  let canonical: Map<string, unknown>;
  before(async () => {
    canonical = protocDescriptors();
    server = createServer({ services: [new InventoryService()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the descriptor index of every bundled well-known type", () => {
    const root = new protobuf.Root();
    for (const f of WKT) root.addJSON((protobuf.common.get(f) as { nested: Record<string, protobuf.AnyNestedObject> }).nested);
    const { files } = buildDescriptorIndex([{ root }]);
    for (const name of WKT) {
      assert.ok(files.has(name), `${name} is missing`);
      assert.deepEqual(asJson(files.get(name)!), canonical.get(name), name);
    }
  });

  for (const name of ["google/protobuf/struct.proto", "google/protobuf/timestamp.proto"]) {
    it(`reflection serves ${name} as protoc does (for struct.proto: string_value, not stringValue)`, async () => {
      const [bytes] = await fileByName(server.url.replace(/^http:\/\//, ""), name);
      assert.deepEqual(asJson(bytes), canonical.get(name));
    });
  }
});
