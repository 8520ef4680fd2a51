import * as assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, it } from "node:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { describeService, toProtoFiles } from "../../src/index.js";
import { buildDescriptorIndex } from "../../src/schema/descriptor.js";
import { deriveSchema } from "../../src/schema/derive.js";
import { toProtobufRoot } from "../../src/schema/protobufjs.js";
import { BinderServiceImpl } from "../binder/services.js";
import { InventoryService } from "./inventory-service.js";

/** protoc (Debian's protobuf-compiler, which .ci/run installs) as an independent, strict reader. */
const HAVE_PROTOC = spawnSync("protoc", ["--version"]).status === 0;
const dir = mkdtempSync(join(tmpdir(), "triple-protoc-"));

describe("protoc reads what we export and what reflection serves", { skip: !HAVE_PROTOC && !process.env.CI && "protoc is not installed" }, () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("the exported .proto files compile", () => {
    for (const f of toProtoFiles([InventoryService, BinderServiceImpl])) {
      const path = join(dir, "src", f.name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, f.text);
      execFileSync("protoc", ["-I", join(dir, "src"), "-I", "/usr/include", `--descriptor_set_out=${join(dir, "out.pb")}`, f.name], {
        stdio: "pipe",
      });
    }
  });

  it("the reflected FileDescriptorProtos are a valid descriptor set", () => {
    const { files } = deriveSchema([describeService(InventoryService)]);
    const fileOf = new Map(files.flatMap((f) => [...f.messages, ...f.services].map((m) => [m.fullName, f.name] as const)));
    const index = buildDescriptorIndex([{ root: toProtobufRoot(files), fileOf: (n) => fileOf.get(n) }]);
    const order = ["google/protobuf/struct.proto", "google/protobuf/timestamp.proto", "inventory/inventory_service.proto"];
    const set = create(FileDescriptorSetSchema, { file: order.map((n) => fromBinary(FileDescriptorProtoSchema, index.files.get(n)!)) });
    const pb = join(dir, "reflected.pb");
    writeFileSync(pb, toBinary(FileDescriptorSetSchema, set));
    const out = join(dir, "again.pb");
    execFileSync("protoc", [`--descriptor_set_in=${pb}`, `--descriptor_set_out=${out}`, "inventory/inventory_service.proto"], { stdio: "pipe" });
    const again = fromBinary(FileDescriptorSetSchema, readFileSync(out));
    assert.deepEqual(
      again.file.map((f) => f.name),
      ["inventory/inventory_service.proto"],
    );
    assert.ok(again.file[0].messageType.some((m) => m.name === "Report"));
  });
});
