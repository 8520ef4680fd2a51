import type { FieldDesc, TypeDesc } from "../service/type-desc.js";

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type JsonSchema = Record<string, unknown>;

/** How bytes travel: base64 text in JSON and XML, raw in a multipart part. */
export type BytesForm = "base64" | "binary";

/**
 * The JSON Schema keywords of a field's or parameter's constraints (`min`, `max`, `minLength`,
 * `maxLength`, `pattern`, `enum`, `format`, `minItems`, `maxItems`, `description`), when the
 * descriptor carries them (`constraints`). The one place that maps constraints to the document.
 */
export function constraintKeywords(desc: object): JsonSchema {
  const c = (desc as { constraints?: Record<string, unknown> }).constraints;
  const description = (desc as { description?: unknown }).description ?? c?.description;
  const out: JsonSchema = {};
  if (typeof description === "string") out.description = description;
  if (!c) return out;
  const rename: Record<string, string> = { min: "minimum", max: "maximum" };
  for (const key of ["min", "max", "minLength", "maxLength", "pattern", "enum", "format", "minItems", "maxItems"]) {
    const v = c[key];
    if (v === undefined) continue;
    out[rename[key] ?? key] = v instanceof RegExp ? v.source : v;
  }
  return out;
}

/**
 * Turns the type model into JSON Schemas, collecting decorated classes as named component
 * schemas (`#/components/schemas/User`); a second class of the same name gets `User_2`.
 */
export class SchemaBuilder {
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
    }
  }

  /** A field's or parameter's schema: its type's, with its constraints. */
  ofField(f: FieldDesc | { type: TypeDesc }, bytes: BytesForm = "base64"): JsonSchema {
    const base = this.of(f.type, bytes);
    const extra = constraintKeywords(f);
    if (Object.keys(extra).length === 0) return base;
    // A $ref with siblings is fine in 3.1, but constraints of an array apply to the array.
    return { ...base, ...extra };
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
