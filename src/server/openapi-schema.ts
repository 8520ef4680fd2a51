// Owns `withConstraints`, `SchemaBuilder`. A schema with a field's or parameter's constraints as
// JSON Schema keywords: the one place that maps `@Field`/`@Param` constraints to the document. Must
// not change: limits before reading, authorization before decoding (docs/security.md).
import type { Constraints } from "../service/constraints.js";
import type { TypeDesc } from "../service/type-desc.js";

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

/** How bytes travel: base64 text in JSON and XML, raw in a multipart part. */
export type BytesForm = "base64" | "binary";

/** A JSON value for a constraint's bound: numbers stay numbers, bigints and dates become text. */
function jsonBound(v: unknown): unknown {
  if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  return v;
}

/** The keywords of the per-value constraints (on an array: per element) for a value of type `t`. */
function valueKeywords(c: Constraints, t: TypeDesc): JsonSchema {
  const out: JsonSchema = {};
  const numeric = t.kind === "number";
  if (c.min !== undefined) out[numeric ? "minimum" : "x-minimum"] = jsonBound(c.min);
  if (c.max !== undefined) out[numeric ? "maximum" : "x-maximum"] = jsonBound(c.max);
  if (c.pattern !== undefined) out.pattern = c.pattern instanceof RegExp ? c.pattern.source : c.pattern;
  if (c.enum !== undefined) out.enum = c.enum.map((v) => (typeof v === "bigint" ? v.toString() : v));
  if (c.format !== undefined) out.format = c.format;
  return out;
}

/**
 * A schema with a field's or parameter's constraints as JSON Schema keywords: the one place that
 * maps `@Field`/`@Param` constraints to the document. On an array `min`, `max`, `pattern`, `enum`
 * and `format` bound each element and `minLength`/`maxLength`/`minItems`/`maxItems` the count
 * (`minProperties`/`maxProperties` on a map), as the checks apply them.
 */
function withConstraints(schema: JsonSchema, t: TypeDesc, c: Constraints | undefined): JsonSchema {
  if (!c) return schema;
  const out: JsonSchema = { ...schema };
  if (c.description !== undefined) out.description = c.description;
  const isArray = t.kind === "array";
  const count = isArray ? ["minItems", "maxItems"] : t.kind === "map" ? ["minProperties", "maxProperties"] : undefined;
  const lengthKeys = count ?? (t.kind === "string" ? ["minLength", "maxLength"] : ["x-minLength", "x-maxLength"]);
  if (c.minLength !== undefined) out[lengthKeys[0]] = c.minLength;
  if (c.maxLength !== undefined) out[lengthKeys[1]] = c.maxLength;
  if (count && c.minItems !== undefined) out[count[0]] = c.minItems;
  if (count && c.maxItems !== undefined) out[count[1]] = c.maxItems;
  if (isArray) {
    const el = valueKeywords(c, (t as { element: TypeDesc }).element);
    if (Object.keys(el).length > 0) out.items = { ...(out.items as JsonSchema), ...el };
  } else {
    Object.assign(out, valueKeywords(c, t));
  }
  return out;
}

/**
 * Turns the type model into JSON Schemas, collecting decorated classes as named component
 * schemas (`#/components/schemas/User`); a second class of the same name gets `User_2`.
 */
export class JsonSchemaBuilder {
  /** The component schemas, by name. */
  readonly components: Record<string, JsonSchema> = {};
  private readonly names = new Map<object, string>();

  /** The schema of a type; `bytes` says how byte arrays and files travel. */
  of(t: TypeDesc, bytes: BytesForm = "base64"): JsonSchema {
    switch (t.kind) {
      case "string":
        return { type: "string" };
      case "number":
        return numberSchema(t.proto);
      case "boolean":
        return { type: "boolean" };
      case "bigint":
        return { type: "string", pattern: "^[+-]?\\d+$", description: "an integer of any size, as decimal text" };
      case "date":
        return { type: "string", format: "date-time" };
      case "bytes":
      case "file":
      case "upload":
        return bytes === "binary"
          ? { type: "string", format: "binary", contentMediaType: "application/octet-stream" }
          : { type: "string", contentEncoding: "base64" };
      case "map":
        return { type: "object", additionalProperties: this.of(t.value, bytes) };
      case "array":
        return { type: "array", items: this.of(t.element, bytes) };
      case "class":
        return { $ref: `#/components/schemas/${this.classSchema(t)}` };
      case "any":
        return {};
      case "download":
        return { type: "string", format: "binary", contentMediaType: "application/octet-stream" };
    }
  }

  /** A field's or parameter's schema: its type's, with its constraints (a `$ref` may have siblings in 3.1). */
  ofField(f: { readonly type: TypeDesc; readonly constraints?: Constraints }, bytes: BytesForm = "base64"): JsonSchema {
    return withConstraints(this.of(f.type, bytes), f.type, f.constraints);
  }

  private classSchema(t: Extract<TypeDesc, { kind: "class" }>): string {
    const known = this.names.get(t.ctor);
    if (known) return known;
    const base = t.ctor.name || "Object";
    let name = base;
    for (let i = 2; this.components[name] !== undefined; i++) name = `${base}_${i}`;
    this.names.set(t.ctor, name);
    const schema: JsonSchema = { type: "object", properties: {} };
    this.components[name] = schema; // before the fields: self-references terminate
    const props: Record<string, JsonSchema> = {};
    for (const f of t.fields) props[f.name] = this.ofField(f);
    schema.properties = props;
    const required = t.fields.filter((f) => !f.optional).map((f) => f.name);
    if (required.length > 0) schema.required = required;
    return name;
  }
}

function numberSchema(proto: string | undefined): JsonSchema {
  switch (proto) {
    case "int32":
      return { type: "integer", format: "int32" };
    case "uint32":
      return { type: "integer", format: "int32", minimum: 0 };
    case "int64":
    case "uint64":
      return { type: "integer", format: "int64", ...(proto === "uint64" ? { minimum: 0 } : {}) };
    case "float":
      return { type: "number", format: "float" };
    default:
      return { type: "number", format: "double" };
  }
}
