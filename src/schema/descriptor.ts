// Owns `buildDescriptorIndex`, `nameFile`. Builds the descriptor index of every top-level type and
// service in the sources. Must not change: what a schema lock records (older locks must still parse
// and diff).
import { basename, dirname, relative } from "node:path";
import * as protobuf from "protobufjs";
import type * as Descriptor from "protobufjs/ext/descriptor";
import { lazyModule } from "../codec/lazy-module.js";
import { canonicalWktFiles } from "./wkt-descriptors.js";

/** protobufjs's descriptor types load with the first reflection request, not with the server. */
const descriptorTypes = lazyModule(() => require("protobufjs/ext/descriptor") as typeof Descriptor);

/**
 * FileDescriptorProtos of protobufjs types, as gRPC server reflection serves them and as strict
 * consumers (protoc, protobuf-go, C++ `DescriptorPool`, `@bufbuild/protobuf`) accept them:
 * fully-qualified type names, `dependency` filled, map entries named `<Field>Entry`, proto3
 * `optional` as a synthetic oneof after the real ones, and the well-known types under their
 * canonical file names, served as their canonical descriptors (protoc's, see wkt-descriptors.ts).
 * (protobufjs's own `toDescriptor` does none of these.)
 */

/** The file each well-known type lives in, from protobufjs's bundled definitions. */
const WKT_FILE = new Map<string, string>();
for (const file of Object.keys(protobuf.common)) {
  if (!file.endsWith(".proto")) continue;
  const json = protobuf.common.get(file) as { nested?: { google?: { nested?: { protobuf?: { nested?: object } } } } };
  for (const name of Object.keys(json?.nested?.google?.nested?.protobuf?.nested ?? {})) WKT_FILE.set(`google.protobuf.${name}`, file);
}

type Top = protobuf.Type | protobuf.Enum | protobuf.Service;

const SCALARS: Readonly<Record<string, string>> = {
  double: "TYPE_DOUBLE",
  float: "TYPE_FLOAT",
  int64: "TYPE_INT64",
  uint64: "TYPE_UINT64",
  int32: "TYPE_INT32",
  fixed64: "TYPE_FIXED64",
  fixed32: "TYPE_FIXED32",
  bool: "TYPE_BOOL",
  string: "TYPE_STRING",
  bytes: "TYPE_BYTES",
  uint32: "TYPE_UINT32",
  sfixed32: "TYPE_SFIXED32",
  sfixed64: "TYPE_SFIXED64",
  sint32: "TYPE_SINT32",
  sint64: "TYPE_SINT64",
};

function stripDot(name: string): string {
  return name.startsWith(".") ? name.slice(1) : name;
}

function jsonName(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function entryName(field: string): string {
  const camel = jsonName(field);
  return `${camel[0].toUpperCase()}${camel.slice(1)}Entry`;
}

/** The file-local view of one message's fields: type, label, oneof and map entry. */
class MessageWriter {
  readonly refs = new Set<string>();
  private readonly oneofs: protobuf.OneOf[];

  constructor(private readonly type: protobuf.Type) {
    // Real oneofs first: proto3 `optional`'s synthetic ones must follow them.
    const synthetic = (o: protobuf.OneOf) => o.fieldsArray.length === 1 && o.fieldsArray[0].options?.proto3_optional === true;
    this.oneofs = [...type.oneofsArray.filter((o) => !synthetic(o)), ...type.oneofsArray.filter(synthetic)];
  }

  write(): Record<string, unknown> {
    const t = this.type;
    const nestedType: Record<string, unknown>[] = [];
    const field = t.fieldsArray.map((f) => this.field(f, nestedType));
    for (const n of t.nestedArray) {
      if (n instanceof protobuf.Type) {
        const w = new MessageWriter(n);
        nestedType.push(w.write());
        for (const r of w.refs) this.refs.add(r);
      }
    }
    const enumType = t.nestedArray.filter((n): n is protobuf.Enum => n instanceof protobuf.Enum).map(enumProto);
    return { name: t.name, field, nestedType, enumType, oneofDecl: this.oneofs.map((o) => ({ name: o.name })) };
  }

  private typeOf(f: protobuf.Field): { type: string; typeName?: string } {
    f.resolve();
    const r = f.resolvedType;
    if (!r) return { type: SCALARS[f.type] ?? "TYPE_STRING" };
    this.refs.add(stripDot(r.fullName));
    return { type: r instanceof protobuf.Enum ? "TYPE_ENUM" : "TYPE_MESSAGE", typeName: r.fullName };
  }

  private field(f: protobuf.Field, nestedType: Record<string, unknown>[]): Record<string, unknown> {
    const base = { name: f.name, number: f.id, jsonName: jsonName(f.name) };
    if (f instanceof protobuf.MapField) {
      const entry = entryName(f.name);
      const value = { name: "value", number: 2, label: "LABEL_OPTIONAL", jsonName: "value", ...this.typeOf(f) };
      const key = { name: "key", number: 1, label: "LABEL_OPTIONAL", type: SCALARS[f.keyType], jsonName: "key" };
      nestedType.push({ name: entry, field: [key, value], options: { mapEntry: true } });
      return { ...base, label: "LABEL_REPEATED", type: "TYPE_MESSAGE", typeName: `${this.type.fullName}.${entry}` };
    }
    const out: Record<string, unknown> = { ...base, label: f.repeated ? "LABEL_REPEATED" : "LABEL_OPTIONAL", ...this.typeOf(f) };
    if (f.partOf) out.oneofIndex = this.oneofs.indexOf(f.partOf);
    if (f.options?.proto3_optional === true) out.proto3Optional = true;
    return out;
  }
}

function enumProto(e: protobuf.Enum): Record<string, unknown> {
  return { name: e.name, value: Object.entries(e.values).map(([name, number]) => ({ name, number })) };
}

function serviceProto(s: protobuf.Service, refs: Set<string>): Record<string, unknown> {
  const method = s.methodsArray.map((m) => {
    m.resolve();
    const input = m.resolvedRequestType!.fullName;
    const output = m.resolvedResponseType!.fullName;
    refs.add(stripDot(input));
    refs.add(stripDot(output));
    const noSideEffects = m.options?.idempotency_level === "NO_SIDE_EFFECTS";
    const options = noSideEffects ? { idempotencyLevel: "NO_SIDE_EFFECTS" } : undefined;
    return { name: m.name, inputType: input, outputType: output, clientStreaming: !!m.requestStream, serverStreaming: !!m.responseStream, options };
  });
  return { name: s.name, method };
}

/** The descriptors of some roots' types, by file, and which file defines each symbol. */
export interface DescriptorIndex {
  /** File name → serialized FileDescriptorProto. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  /** File name → the files it imports. */
  readonly dependencies: ReadonlyMap<string, readonly string[]>;
  /** Full name (services, methods, messages, enums, no leading dot) → its file. */
  readonly symbols: ReadonlyMap<string, string>;
}

/** Where a root's types live: `fileOf` names the file of a top-level type (undefined: guess). */
export interface DescriptorSource {
  readonly root: protobuf.Root;
  fileOf?(fullName: string): string | undefined;
  /**
   * Report the fields' comments (`source_code_info`): the derived schema's, which carry the
   * descriptions and validation constraints the exported .proto shows.
   */
  readonly comments?: boolean;
}

interface FileAcc {
  readonly pkg: string;
  readonly tops: Top[];
  /** Report the comments of these tops' fields. */
  comments: boolean;
}

function tops(ns: protobuf.NamespaceBase, out: Top[]): Top[] {
  for (const n of ns.nestedArray) {
    if (n instanceof protobuf.Type || n instanceof protobuf.Enum || n instanceof protobuf.Service) out.push(n);
    else if (n instanceof protobuf.Namespace) tops(n, out);
  }
  return out;
}

function guessFile(root: protobuf.Root, t: Top): string {
  const name = stripDot(t.fullName);
  const wkt = WKT_FILE.get(name);
  if (wkt) return wkt;
  if (t.filename) {
    // Loaded from a .proto: its path relative to the main file, as imports name it.
    const main = root.files[0];
    if (!main) return t.filename;
    const rel = relative(dirname(main), t.filename);
    return rel.startsWith("..") ? basename(t.filename) : rel;
  }
  const pkg = stripDot(t.parent?.fullName ?? "");
  return `${pkg ? pkg.replace(/\./g, "/") : "default"}.proto`;
}

/** Builds the descriptor index of every top-level type and service in the sources. */
export function buildDescriptorIndex(sources: readonly DescriptorSource[]): DescriptorIndex {
  const acc = new Map<string, FileAcc>();
  const symbols = new Map<string, string>();
  for (const src of sources) {
    src.root.resolveAll();
    for (const t of tops(src.root, [])) {
      const full = stripDot(t.fullName);
      if (symbols.has(full)) continue; // the same well-known type in two roots
      const file = src.fileOf?.(full) ?? guessFile(src.root, t);
      symbols.set(full, file);
      if (t instanceof protobuf.Service) for (const m of t.methodsArray) symbols.set(`${full}.${m.name}`, file);
      if (t instanceof protobuf.Type) indexNested(t, file, symbols);
      let f = acc.get(file);
      if (!f) acc.set(file, (f = { pkg: stripDot(t.parent?.fullName ?? ""), tops: [], comments: false }));
      f.tops.push(t);
      if (src.comments) f.comments = true;
    }
  }
  const files = new Map<string, Uint8Array>();
  const dependencies = new Map<string, string[]>();
  const wkt = canonicalWktFiles();
  for (const [name, f] of acc) {
    const canonical = wkt.get(name);
    if (canonical) {
      // A well-known type: protoc's own descriptor (these files import nothing).
      files.set(name, canonical);
      dependencies.set(name, []);
      continue;
    }
    const [bytes, deps] = fileProto(name, f, symbols);
    files.set(name, bytes);
    dependencies.set(name, deps);
  }
  return { files, dependencies, symbols };
}

function indexNested(t: protobuf.Type, file: string, symbols: Map<string, string>): void {
  for (const n of t.nestedArray) {
    if (!(n instanceof protobuf.Type || n instanceof protobuf.Enum)) continue;
    symbols.set(stripDot(n.fullName), file);
    if (n instanceof protobuf.Type) indexNested(n, file, symbols);
  }
}

function fileProto(name: string, f: FileAcc, symbols: ReadonlyMap<string, string>): [Uint8Array, string[]] {
  const refs = new Set<string>();
  const messageType: Record<string, unknown>[] = [];
  const enumType: Record<string, unknown>[] = [];
  const service: Record<string, unknown>[] = [];
  for (const t of f.tops) {
    if (t instanceof protobuf.Type) {
      const w = new MessageWriter(t);
      messageType.push(w.write());
      for (const r of w.refs) refs.add(r);
    } else if (t instanceof protobuf.Enum) enumType.push(enumProto(t));
    else service.push(serviceProto(t, refs));
  }
  const deps = [...new Set([...refs].map((r) => symbols.get(r)).filter((d): d is string => !!d && d !== name))].sort();
  const obj: Record<string, unknown> = { name, package: f.pkg, dependency: deps, messageType, enumType, service, syntax: "proto3" };
  if (f.comments) {
    const location = fieldComments(f.tops.filter((t): t is protobuf.Type => t instanceof protobuf.Type));
    if (location.length > 0) obj.sourceCodeInfo = { location };
  }
  const T = descriptorTypes().FileDescriptorProto as unknown as protobuf.Type;
  return [T.encode(T.fromObject(obj)).finish(), deps];
}

/**
 * `source_code_info` locations of the top-level messages' commented fields: path `[4, message,
 * 2, field]` (FileDescriptorProto.message_type, DescriptorProto.field), each comment line led by
 * a space as protoc writes it. There is no source text, so every span is `[0, 0, 0]`.
 */
function fieldComments(messages: readonly protobuf.Type[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  messages.forEach((m, mi) => {
    m.fieldsArray.forEach((f, fi) => {
      if (!f.comment) return;
      const leadingComments = `${f.comment
        .split("\n")
        .map((l) => ` ${l}`)
        .join("\n")}\n`;
      out.push({ path: [4, mi, 2, fi], span: [0, 0, 0], leadingComments });
    });
  });
  return out;
}

/** Gives every type of a JSON-built root the file name reflection reports for it. */
export function nameFile(root: protobuf.Root, file: string): void {
  const visit = (ns: protobuf.NamespaceBase) => {
    for (const n of ns.nestedArray) {
      if (n instanceof protobuf.Type || n instanceof protobuf.Service || n instanceof protobuf.Enum) n.filename = file;
      if (n instanceof protobuf.Namespace || n instanceof protobuf.Type) visit(n);
    }
  };
  visit(root);
}
