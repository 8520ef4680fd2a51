// Owns `toProtobufRoot`. A protobufjs Root holding the files' messages and services (and the
// well-known types they use), resolved. Must not change: what a schema lock records (older locks
// must still parse and diff).
import type * as protobuf from "protobufjs";
import { protobufjs } from "../codec/protobufjs-runtime.js";
import type { SchemaField, SchemaFile } from "./model.js";
import { simpleName } from "./model.js";

type JsonNamespace = { nested?: Record<string, JsonNamespace | protobuf.IType | protobuf.IService> };

/** The well-known types' definitions as protobufjs ships them, under `google.protobuf`. */
function wellKnownTypes(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of ["google/protobuf/timestamp.proto", "google/protobuf/struct.proto", "google/protobuf/empty.proto"]) {
    const json = protobufjs.common.get(f) as { nested: { google: { nested: { protobuf: { nested: Record<string, unknown> } } } } };
    Object.assign(out, json.nested.google.nested.protobuf.nested);
  }
  return out;
}

function namespaceFor(root: JsonNamespace, pkg: string): JsonNamespace {
  let ns = root;
  for (const part of pkg ? pkg.split(".") : []) {
    ns.nested ??= {};
    ns = (ns.nested[part] ??= {}) as JsonNamespace;
  }
  return ns;
}

function fieldJson(f: SchemaField): protobuf.IField & { keyType?: string; comment?: string } {
  const type = "scalar" in f.type ? f.type.scalar : `.${f.type.message}`;
  const comment = f.comment === undefined ? {} : { comment: f.comment };
  if (f.map) return { keyType: "string", type, id: f.number, ...comment };
  if (f.repeated) return { rule: "repeated", type, id: f.number, ...comment };
  return f.optional ? { type, id: f.number, options: { proto3_optional: true }, ...comment } : { type, id: f.number, ...comment };
}

/** A protobufjs Root holding the files' messages and services (and the well-known types they use), resolved. */
export function toProtobufRoot(files: readonly SchemaFile[]): protobuf.Root {
  const json: JsonNamespace = { nested: { google: { nested: { protobuf: { nested: wellKnownTypes() as JsonNamespace["nested"] } } } } };
  for (const file of files) {
    for (const m of file.messages) {
      const ns = namespaceFor(json, file.package);
      const fields: Record<string, protobuf.IField> = {};
      const oneofs: Record<string, protobuf.IOneOf> = {};
      for (const f of m.fields) {
        fields[f.name] = fieldJson(f);
        // proto3 `optional` is a synthetic one-field oneof: that is what gives the field presence.
        if (f.optional) oneofs[`_${f.name}`] = { oneof: [f.name] };
      }
      (ns.nested ??= {})[simpleName(m.fullName)] = Object.keys(oneofs).length ? { fields, oneofs } : { fields };
    }
    for (const s of file.services) {
      const methods: Record<string, protobuf.IMethod> = {};
      for (const m of s.methods) {
        methods[m.name] = {
          requestType: `.${m.input}`,
          responseType: `.${m.output}`,
          requestStream: m.clientStreaming || undefined,
          responseStream: m.serverStreaming || undefined,
          options: m.idempotent ? { idempotency_level: "NO_SIDE_EFFECTS" } : undefined,
        };
      }
      (namespaceFor(json, file.package).nested ??= {})[simpleName(s.fullName)] = { methods };
    }
  }
  const root = protobufjs.Root.fromJSON(json as protobuf.INamespace);
  root.resolveAll();
  return root;
}
