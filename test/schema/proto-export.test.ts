import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import { createServer, toProto, toProtoFiles, type TripleServer } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { BinderServiceImpl } from "../binder/services.js";
import { unary } from "../grpc/grpc-js-client.js";
import { InventoryService } from "./inventory-service.js";

const CLI = resolve("dist/src/cli/main.js");
const MODULE = resolve("dist/test/schema/inventory-service.js");

/** A grpc-js client built from nothing but the exported .proto text. */
function clientFrom(protoText: string, address: string): { client: any; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "triple-proto-"));
  const file = join(dir, "inventory.proto");
  writeFileSync(file, protoText);
  const def = loader.loadSync(file, { keepCase: true, longs: String, enums: String, defaults: true });
  const Ctor = (grpc.loadPackageDefinition(def) as any).inventory.InventoryService;
  return { client: new Ctor(address, grpc.credentials.createInsecure()), dir };
}

describe(".proto export of an IDL-less service", () => {
  let server: TripleServer;
  let address: string;
  before(async () => {
    server = createServer({ services: [new InventoryService()] });
    const a = await server.listen({ port: 0 });
    address = `127.0.0.1:${a.port}`;
  });
  after(() => server.close());

  it("states the derived messages: parameters in order, optional, types, class messages", () => {
    const text = toProto(InventoryService);
    assert.match(text, /^syntax = "proto3";\n\npackage inventory;/);
    assert.match(text, /import "google\/protobuf\/timestamp\.proto";/);
    assert.match(text, /rpc adjustStock \(\.inventory\.AdjustStockRequest\) returns \(\.inventory\.AdjustStockResponse\);/);
    assert.match(text, /message AdjustStockRequest \{\n {2}string sku = 1;\n {2}double delta = 2;\n {2}optional string reason = 3;\n\}/);
    // A side-effect-free method says so, as connect-web's useHttpGet reads it.
    assert.match(text, /rpc report \(\.inventory\.ReportRequest\) returns \(\.inventory\.Report\) \{\n {4}option idempotency_level = NO_SIDE_EFFECTS;\n {2}\}/);
    assert.match(
      text,
      /message Report \{\n {2}\.google\.protobuf\.Timestamp at = 1;\n {2}bytes raw = 2;\n {2}int64 total = 3;\n {2}map<string, double> counts = 4;\n {2}\.inventory\.Item item = 5;\n\}/,
    );
    assert.match(text, /message ItemsResponse \{\n {2}repeated \.inventory\.Item value = 1;\n\}/);
  });

  it("the CLI prints the same text, and --out writes it", () => {
    assert.equal(execFileSync(process.execPath, [CLI, "proto", MODULE], { encoding: "utf8" }), toProto(InventoryService));
    const dir = mkdtempSync(join(tmpdir(), "triple-cli-"));
    try {
      const out = join(dir, "x.proto");
      execFileSync(process.execPath, [CLI, "proto", MODULE, "--out", out]);
      assert.equal(readFileSync(out, "utf8"), toProto(InventoryService));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the CLI says what is wrong with its input", () => {
    const r = (() => {
      try {
        execFileSync(process.execPath, [CLI, "proto"], { encoding: "utf8", stdio: "pipe" });
        return "";
      } catch (e) {
        return String((e as { stderr: string }).stderr);
      }
    })();
    assert.match(r, /usage: triple-rpc proto <module\.js>/);
  });

  it("a grpc-js client generated from the export calls the running server with plain protobuf", async () => {
    const { client, dir } = clientFrom(toProto(InventoryService), address);
    try {
      const adj = await unary(client, "adjustStock", { sku: "A1", delta: -1 });
      assert.equal(adj.error, undefined, adj.error?.message);
      assert.equal(adj.response.value.structValue.fields.sku.stringValue, "A1");
      assert.equal(adj.response.value.structValue.fields.delta.numberValue, -1);
      assert.ok("nullValue" in adj.response.value.structValue.fields.reason, "reason is null");
      const withReason = await unary(client, "adjustStock", { sku: "A1", delta: 2, reason: "recount" });
      assert.equal(withReason.response.value.structValue.fields.reason.stringValue, "recount");
      const report = await unary(client, "report", { sku: "B2" });
      assert.equal(report.error, undefined, report.error?.message);
      assert.equal(report.response.total, String(2n ** 60n));
      assert.deepEqual([...report.response.raw], [0, 255, 7]);
      assert.deepEqual(report.response.at, { seconds: String(Date.UTC(2026, 10, 24, 12) / 1000), nanos: 5_000_000 });
      assert.deepEqual(report.response.counts, { B2: 3 });
      const items = await unary(client, "items", {});
      assert.deepEqual(items.response.value, [{ sku: "A1", name: "bolt", quantity: 3 }], "an absent optional field stays absent");
      const greet = await unary(client, "Greet", { name: "ann" });
      assert.equal(greet.response.value.stringValue, "hello ann");
    } finally {
      client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a missing required message field is invalid_argument naming it", async () => {
    const { client, dir } = clientFrom(toProto(InventoryService), address);
    try {
      const r = await unary(client, "addItem", {});
      assert.equal(r.error?.code, grpc.status.INVALID_ARGUMENT);
      assert.match(r.error?.details ?? "", /parameter #1 \(item\) is missing/);
      const ok = await unary(client, "addItem", { item: { sku: "C3", name: "nut", quantity: 2 } });
      assert.equal(ok.error, undefined, ok.error?.message);
      assert.deepEqual(ok.response.value.structValue.fields.sku.stringValue, "C3");
    } finally {
      client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("services in several packages need several files", () => {
    assert.throws(() => toProto([InventoryService, BinderServiceImpl]), /span 2 packages/);
    const files = toProtoFiles([InventoryService, BinderServiceImpl, GreetServiceImpl]);
    assert.deepEqual(
      files.map((f) => f.name),
      ["inventory/inventory_service.proto", "test/binder_service.proto"],
    );
  });
});
