// Owns `toProtoFiles`, `toProto`. The derived .proto files of some service classes, one per
// package: `{ name, text }`. Must not change: what a schema lock records (older locks must still
// parse and diff).
import { describeService } from "../service/describe.js";
import { deriveSchema } from "./derive.js";
import { type SchemaField, type SchemaFile, type SchemaMessage, simpleName } from "./model.js";

function typeName(f: SchemaField): string {
  return "scalar" in f.type ? f.type.scalar : `.${f.type.message}`;
}

function fieldLine(f: SchemaField): string {
  const comment =
    f.comment === undefined
      ? ""
      : f.comment
          .split("\n")
          .map((l) => `  // ${l}\n`)
          .join("");
  if (f.map) return `${comment}  map<string, ${typeName(f)}> ${f.name} = ${f.number};`;
  const label = f.repeated ? "repeated " : f.optional ? "optional " : "";
  return `${comment}  ${label}${typeName(f)} ${f.name} = ${f.number};`;
}

function messageText(m: SchemaMessage): string {
  const fields = m.fields.map(fieldLine);
  return `message ${simpleName(m.fullName)} {\n${fields.length ? `${fields.join("\n")}\n` : ""}}`;
}

/** One .proto file's text: proto3, its package, imports, services, then messages. */
function renderProto(file: SchemaFile): string {
  const parts = ['syntax = "proto3";'];
  if (file.package) parts.push(`package ${file.package};`);
  if (file.dependencies.length) parts.push(file.dependencies.map((d) => `import "${d}";`).join("\n"));
  for (const s of file.services) {
    const rpcs = s.methods.map((m) => {
      const input = `${m.clientStreaming ? "stream " : ""}.${m.input}`;
      const output = `${m.serverStreaming ? "stream " : ""}.${m.output}`;
      const head = `  rpc ${m.name} (${input}) returns (${output})`;
      return m.idempotent ? `${head} {\n    option idempotency_level = NO_SIDE_EFFECTS;\n  }` : `${head};`;
    });
    parts.push(`service ${simpleName(s.fullName)} {\n${rpcs.join("\n")}\n}`);
  }
  for (const m of file.messages) parts.push(messageText(m));
  return `${parts.join("\n\n")}\n`;
}

/** The files of one package merged into one: what a single exported .proto holds. */
function mergePackage(files: readonly SchemaFile[], pkg: string): SchemaFile {
  const mine = files.filter((f) => f.package === pkg);
  const own = new Set(mine.map((f) => f.name));
  const deps = new Set(mine.flatMap((f) => f.dependencies).filter((d) => !own.has(d)));
  return {
    name: mine[0].name,
    package: pkg,
    dependencies: [...deps].sort(),
    messages: mine.flatMap((f) => f.messages),
    services: mine.flatMap((f) => f.services).filter((s) => s.methods.length > 0),
  };
}

type ServiceClass = abstract new (...args: never[]) => unknown;

/** The derived .proto files of some service classes, one per package: `{ name, text }`. */
export function toProtoFiles(classes: ServiceClass | readonly ServiceClass[]): { name: string; package: string; text: string }[] {
  const list = Array.isArray(classes) ? (classes as readonly ServiceClass[]) : [classes as ServiceClass];
  const { files } = deriveSchema(list.map((c) => describeService(c)));
  // Services bound to a .proto of their own contribute nothing here.
  const used = files.filter((f) => f.messages.length > 0 || f.services.some((s) => s.methods.length > 0));
  const packages = [...new Set(used.map((f) => f.package))];
  return packages.map((pkg) => {
    const file = mergePackage(files, pkg);
    return { name: file.name, package: pkg, text: renderProto(file) };
  });
}

/**
 * The .proto text of decorated service classes: the schema derived from their descriptors
 * (docs/schema.md), loadable with `@grpc/proto-loader` or `protoc`. Methods bound to a .proto
 * of their own are left out. Services in several packages need several files: use
 * {@link toProtoFiles} then.
 */
export function toProto(classes: ServiceClass | readonly ServiceClass[]): string {
  const files = toProtoFiles(classes);
  if (files.length === 0) {
    throw new TypeError(
      "toProto: every service given is bound to a .proto of its own (@Service(name, { proto })): that file is its schema; nothing is derived",
    );
  }
  if (files.length !== 1) {
    throw new TypeError(
      `toProto: the services span ${files.length} packages (${files.map((f) => f.package || "(none)").join(", ")}), ` +
        "and one .proto file holds one package: use toProtoFiles(), or `triple-rpc proto --out-dir`",
    );
  }
  return files[0].text;
}
