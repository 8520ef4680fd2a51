// Owns `fieldName`, `SchemaBuilder`, `deriveSchema`. A field name protobuf accepts, from a
// parameter or field name. Must not change: what a schema lock records (older locks must still
// parse and diff).
import type { Constraints } from "../service/constraints.js";
import { constraintComment } from "../service/constraint-comment.js";
import type { MethodDescriptor, ServiceDescriptor } from "../service/descriptors.js";
import type { FieldDesc, TypeDesc } from "../service/type-desc.js";
import { type FieldType, packageOf, type SchemaField, type SchemaFile, type SchemaMessage, type SchemaMethod, simpleName, WKT_FILES } from "./model.js";

/**
 * How a method's messages map to its JavaScript side. `params`: the request message's fields are
 * the parameters; `value`: the message has one field (`value = 1`, or the parameter's name for a
 * request stream) holding the whole value; `class`: the message is the decorated class itself.
 */
type MessageShape = "params" | "value" | "class";

/** The derived messages of one method. */
export interface DerivedMethod {
  readonly request: string;
  readonly response: string;
  readonly requestShape: MessageShape;
  readonly responseShape: MessageShape;
  /** The field name of a `value`-shaped request message. */
  readonly requestField: string;
  /** The field name of each parameter in a `params`-shaped request message. */
  readonly paramFields: readonly string[];
}

/** The schema derived from IDL-less services: their files, and each method's messages. */
export interface DerivedSchema {
  readonly files: readonly SchemaFile[];
  readonly methods: ReadonlyMap<MethodDescriptor, DerivedMethod>;
}

function upperFirst(s: string): string {
  return s.length === 0 ? s : s[0].toUpperCase() + s.slice(1);
}

function snake(s: string): string {
  return s.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

/** A field name protobuf accepts, from a parameter or field name. */
export function fieldName(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z]/.test(clean) ? clean : `f_${clean}`;
}

interface FileBuilder {
  readonly name: string;
  readonly package: string;
  readonly messages: SchemaMessage[];
  readonly services: { fullName: string; methods: SchemaMethod[] }[];
  readonly refs: Set<string>;
}

/**
 * Builds the protobuf schema of IDL-less services from their descriptors, service by service in
 * registration order. Rules (docs/schema.md):
 * - package: the service name's dotted prefix; one file per service, `<package path>/<service_snake>.proto`;
 * - per method `<Method>Request` with the parameters as fields (name: the `@Param` name, else
 *   `arg<N>`; number: `@Param({ tag })`, else the position from 1) and `<Method>Response
 *   { value = 1 }`, or the class's own message when the result is a decorated class;
 * - a decorated class is one message, in the package of the first service that uses it;
 * - a second service in the same package with a method of the same name gets
 *   `<Service><Method>Request` instead.
 */
export class ProtoSchemaBuilder {
  private readonly files: FileBuilder[] = [];
  private readonly classes = new Map<object, { fullName: string; file: FileBuilder }>();
  private readonly taken = new Set<string>();
  private readonly methods = new Map<MethodDescriptor, DerivedMethod>();
  private readonly messageFiles = new Map<string, FileBuilder>();

  /** Adds a service (IDL-less methods only; .proto-bound ones have their own schema). */
  add(service: ServiceDescriptor): this {
    const pkg = packageOf(service.name);
    const svcName = simpleName(service.name);
    const file: FileBuilder = {
      name: `${pkg ? `${pkg.replace(/\./g, "/")}/` : ""}${snake(svcName)}.proto`,
      package: pkg,
      messages: [],
      services: [],
      refs: new Set(),
    };
    this.files.push(file);
    const methods: SchemaMethod[] = [];
    for (const md of service.methods) {
      if (md.requestType) continue;
      methods.push(this.method(file, svcName, md));
    }
    file.services.push({ fullName: service.name, methods });
    return this;
  }

  /** The schema of every service added so far. */
  build(): DerivedSchema {
    const files: SchemaFile[] = this.files.map((f) => ({
      name: f.name,
      package: f.package,
      dependencies: this.dependencies(f),
      messages: f.messages,
      services: f.services,
    }));
    return { files, methods: this.methods };
  }

  private dependencies(f: FileBuilder): string[] {
    const deps = new Set<string>();
    for (const ref of f.refs) {
      const file = WKT_FILES[ref] ?? this.messageFiles.get(ref)?.name;
      if (file && file !== f.name) deps.add(file);
    }
    return [...deps].sort();
  }

  private method(file: FileBuilder, svcName: string, md: MethodDescriptor): SchemaMethod {
    const base = upperFirst(md.name);
    const prefix = this.taken.has(qualify(file.package, `${base}Request`)) ? `${svcName}${base}` : base;
    const streamsIn = md.kind === "client_streaming" || md.kind === "bidi_streaming";
    const streamsOut = md.kind === "server_streaming" || md.kind === "bidi_streaming";
    const req = streamsIn ? this.streamRequest(file, prefix, md) : this.paramsRequest(file, prefix, md);
    const res = this.response(file, prefix, md);
    this.methods.set(md, {
      request: req.name,
      response: res.name,
      requestShape: req.shape,
      responseShape: res.shape,
      requestField: req.field,
      paramFields: md.params.map((p, i) => fieldName(p.name ?? `arg${i + 1}`)),
    });
    return { name: md.name, input: req.name, output: res.name, clientStreaming: streamsIn, serverStreaming: streamsOut, idempotent: md.idempotent };
  }

  private paramsRequest(file: FileBuilder, prefix: string, md: MethodDescriptor) {
    const fields = md.params.map((p, i) => this.field(file, fieldName(p.name ?? `arg${i + 1}`), p.tag, p.type, p.optional, p.constraints, !p.optional));
    const name = this.message(file, `${prefix}Request`, fields);
    return { name, shape: "params" as MessageShape, field: "" };
  }

  private streamRequest(file: FileBuilder, prefix: string, md: MethodDescriptor) {
    const p = md.params[0];
    if (p.type.kind === "class") return { name: this.classMessage(file, p.type), shape: "class" as MessageShape, field: "" };
    const field = fieldName(p.name ?? "value");
    const name = this.message(file, `${prefix}Request`, [this.field(file, field, 1, p.type, false)]);
    return { name, shape: "value" as MessageShape, field };
  }

  private response(file: FileBuilder, prefix: string, md: MethodDescriptor) {
    const t = md.returns;
    if (t?.kind === "class") return { name: this.classMessage(file, t), shape: "class" as MessageShape };
    const name = this.message(file, `${prefix}Response`, [this.field(file, "value", 1, t ?? { kind: "any" }, false)]);
    return { name, shape: "value" as MessageShape };
  }

  private message(file: FileBuilder, simple: string, fields: SchemaField[]): string {
    const fullName = qualify(file.package, simple);
    checkFields(fullName, fields);
    this.taken.add(fullName);
    file.messages.push({ fullName, fields });
    this.messageFiles.set(fullName, file);
    return fullName;
  }

  /** The message of a decorated class, defined once (in the first file that needs it). */
  private classMessage(file: FileBuilder, t: Extract<TypeDesc, { kind: "class" }>): string {
    const known = this.classes.get(t.ctor);
    if (known) return known.fullName;
    let fullName = qualify(file.package, t.ctor.name);
    for (let n = 2; this.taken.has(fullName); n++) fullName = qualify(file.package, `${t.ctor.name}${n}`);
    this.taken.add(fullName);
    const fields: SchemaField[] = [];
    const message: SchemaMessage = { fullName, fields };
    // Registered before its fields so that self-referencing classes terminate.
    this.classes.set(t.ctor, { fullName, file });
    this.messageFiles.set(fullName, file);
    file.messages.push(message);
    t.fields.forEach((f: FieldDesc, i) => {
      fields.push(this.field(file, fieldName(f.name), f.tag ?? i + 1, f.type, f.optional, f.constraints, !f.optional));
    });
    checkFields(fullName, fields);
    return fullName;
  }

  private field(file: FileBuilder, name: string, number: number, t: TypeDesc, optional: boolean, c?: Constraints, required = false): SchemaField {
    const comment = constraintComment(c);
    const extra = comment === undefined ? { required } : { comment, required };
    if (t.kind === "array") {
      return { name, number, type: this.elementType(file, t.element), repeated: true, map: false, optional: false, ...extra };
    }
    if (t.kind === "map") return { name, number, type: this.elementType(file, t.value), repeated: false, map: true, optional: false, ...extra };
    const type = this.typeOf(file, t);
    return { name, number, type, repeated: false, map: false, optional: optional && "scalar" in type, ...extra };
  }

  /** An array element or map value: nested arrays and maps travel as google.protobuf.Value. */
  private elementType(file: FileBuilder, t: TypeDesc): FieldType {
    return t.kind === "array" || t.kind === "map" ? this.ref(file, "google.protobuf.Value") : this.typeOf(file, t);
  }

  private typeOf(file: FileBuilder, t: TypeDesc): FieldType {
    switch (t.kind) {
      case "string":
        return { scalar: "string" };
      case "number":
        return { scalar: t.proto ?? "double" };
      case "boolean":
        return { scalar: "bool" };
      case "bigint":
        return { scalar: "int64" };
      case "bytes":
      case "file":
      case "upload":
      case "download":
        return { scalar: "bytes" };
      case "date":
        return this.ref(file, "google.protobuf.Timestamp");
      case "class":
        return this.ref(file, this.classMessage(file, t));
      default:
        return this.ref(file, "google.protobuf.Value");
    }
  }

  private ref(file: FileBuilder, fullName: string): FieldType {
    file.refs.add(fullName);
    return { message: fullName };
  }
}

/** Field names and numbers must be unique within a message, and numbers valid. */
function checkFields(message: string, fields: readonly SchemaField[]): void {
  const names = new Set<string>();
  const numbers = new Set<number>();
  for (const f of fields) {
    if (!Number.isInteger(f.number) || f.number < 1 || f.number > 536_870_911 || (f.number >= 19000 && f.number <= 19999)) {
      throw new TypeError(`${message}.${f.name}: field number ${f.number} is not a valid protobuf field number`);
    }
    if (numbers.has(f.number)) throw new TypeError(`${message}: two fields have the number ${f.number}; set distinct tags`);
    if (names.has(f.name)) throw new TypeError(`${message}: two fields are named ${f.name}; name the parameters apart with @Param("...")`);
    names.add(f.name);
    numbers.add(f.number);
  }
}

function qualify(pkg: string, name: string): string {
  return pkg ? `${pkg}.${name}` : name;
}

/** The derived schema of some services (their IDL-less methods), on its own. */
export function deriveSchema(services: readonly ServiceDescriptor[]): DerivedSchema {
  const b = new ProtoSchemaBuilder();
  for (const s of services) b.add(s);
  return b.build();
}
