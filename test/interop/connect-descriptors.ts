import { createFileRegistry, type DescService, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import * as path from "node:path";
import * as protobuf from "protobufjs";
// The extension adds Root#toDescriptor and returns the google.protobuf descriptor types.
import descriptorExt = require("protobufjs/ext/descriptor");
import { INTEROP_PROTO_DIR } from "./grpc-js-clients.js";

interface DescMessage {
  name: string;
  field?: { typeName?: string; jsonName?: string }[];
  nestedType?: DescMessage[];
  enumType?: { name: string }[];
}
interface DescFile {
  package?: string;
  messageType?: DescMessage[];
  enumType?: { name: string }[];
  service?: { method: { inputType: string; outputType: string }[] }[];
}

/**
 * A protobufjs Root as FileDescriptorSet bytes that `@bufbuild/protobuf` v2 accepts, made
 * without protoc: protobufjs turns the parsed .proto into a FileDescriptorSet, whose type
 * references are then made fully qualified (protobufjs leaves them relative, which the
 * @bufbuild registry rejects) and whose fields all get a json_name. Method options (such as
 * `idempotency_level`) survive.
 */
export function descriptorSetBytes(root: protobuf.Root, fileName?: string): Uint8Array {
  const set = (root as any).toDescriptor("proto3") as { file: (DescFile & { name?: string })[] };
  if (fileName) for (const f of set.file) f.name = fileName;

  // Protobuf scoping: a name resolves in the innermost enclosing scope that defines it.
  const known = new Set<string>();
  const collect = (scope: string, msgs: DescMessage[] = [], enums: { name: string }[] = []) => {
    for (const e of enums) known.add(`${scope}.${e.name}`);
    for (const m of msgs) {
      known.add(`${scope}.${m.name}`);
      collect(`${scope}.${m.name}`, m.nestedType, m.enumType);
    }
  };
  const resolve = (scope: string, name: string): string => {
    if (name.startsWith(".")) return name;
    for (let s = scope; ; s = s.slice(0, s.lastIndexOf("."))) {
      if (known.has(`${s}.${name}`)) return `${s}.${name}`;
      if (s === "") throw new Error(`type ${name} not found from ${scope}`);
    }
  };
  const qualify = (scope: string, msgs: DescMessage[] = []) => {
    for (const m of msgs) {
      const inner = `${scope}.${m.name}`;
      for (const f of m.field ?? []) {
        if (f.typeName) f.typeName = resolve(inner, f.typeName);
        // protobufjs writes json_name only where it differs from the name; @bufbuild/protobuf (like
        // protoc's output) expects it on every field and would otherwise use "".
        if (!f.jsonName) f.jsonName = (f as { name?: string }).name?.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
      }
      qualify(inner, m.nestedType);
    }
  };
  const scopeOf = (f: DescFile) => (f.package ? `.${f.package}` : "");
  for (const f of set.file) collect(scopeOf(f), f.messageType, f.enumType);
  for (const f of set.file) {
    qualify(scopeOf(f), f.messageType);
    for (const s of f.service ?? []) {
      for (const m of s.method) {
        m.inputType = resolve(scopeOf(f), m.inputType);
        m.outputType = resolve(scopeOf(f), m.outputType);
      }
    }
  }
  return (descriptorExt as any).FileDescriptorSet.encode(set).finish() as Uint8Array;
}

/** test.proto's services for `@bufbuild/protobuf` v2 (what connect-es clients take). */
export function interopServices(): { test: DescService; unimplemented: DescService } {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => path.join(INTEROP_PROTO_DIR, path.basename(target));
  root.loadSync("test.proto", { keepCase: true });
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, descriptorSetBytes(root)));
  const get = (name: string) => {
    const s = registry.getService(name);
    if (!s) throw new Error(`${name} missing from the descriptor set`);
    return s;
  };
  return { test: get("grpc.testing.TestService"), unimplemented: get("grpc.testing.UnimplementedService") };
}
