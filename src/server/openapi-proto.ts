// Owns `ProtoSchemas`. Builds the component schemas of the messages it is asked for, once each.
// Must not change: limits before reading, authorization before decoding (docs/security.md).
import type * as protobuf from "protobufjs";
import type { JsonSchema } from "./openapi-schema.js";

/**
 * JSON Schemas of protobuf messages as ProtoJSON writes and reads them, for methods bound to a
 * .proto: lowerCamelCase field names, 64-bit integers as decimal text (a number is read too),
 * bytes as base64, enums by name, the well-known types in their JSON forms. Every field is
 * optional (proto3 has no required fields). Messages become component schemas named by their
 * full name (`greet.GreetRequest`).
 */

const INT32 = new Set(["int32", "sint32", "sfixed32", "uint32", "fixed32"]);
const INT64 = new Set(["int64", "sint64", "sfixed64", "uint64", "fixed64"]);

/** The JSON forms of the well-known types (ProtoJSON's special cases). */
const WELL_KNOWN: Record<string, JsonSchema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?\\d+(\\.\\d+)?s$", description: "seconds with an s suffix: 1.5s" },
  "google.protobuf.FieldMask": { type: "string", description: "comma-separated lowerCamelCase paths" },
  "google.protobuf.Struct": { type: "object" },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array" },
  "google.protobuf.Empty": { type: "object" },
  "google.protobuf.Any": { type: "object", properties: { "@type": { type: "string" } }, required: ["@type"] },
  "google.protobuf.StringValue": { type: "string" },
  "google.protobuf.BytesValue": { type: "string", contentEncoding: "base64" },
  "google.protobuf.BoolValue": { type: "boolean" },
  "google.protobuf.DoubleValue": { type: "number" },
  "google.protobuf.FloatValue": { type: "number" },
  "google.protobuf.Int32Value": { type: "integer", format: "int32" },
  "google.protobuf.UInt32Value": { type: "integer", format: "int32", minimum: 0 },
  "google.protobuf.Int64Value": { type: ["string", "integer"], format: "int64" },
  "google.protobuf.UInt64Value": { type: ["string", "integer"], format: "int64" },
};

function scalar(type: string): JsonSchema | undefined {
  if (type === "string") return { type: "string" };
  if (type === "bool") return { type: "boolean" };
  if (type === "bytes") return { type: "string", contentEncoding: "base64" };
  if (type === "double" || type === "float") return { type: "number", format: type };
  if (INT32.has(type)) return { type: "integer", format: "int32", ...(type.startsWith("u") || type === "fixed32" ? { minimum: 0 } : {}) };
  if (INT64.has(type)) return { type: ["string", "integer"], format: "int64", description: "a 64-bit integer: decimal text (a JSON number is read too)" };
  return undefined;
}

function lowerCamel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Builds the component schemas of the messages it is asked for, once each. */
export class ProtoSchemas {
  /** Component schemas by message full name (shared with the class schemas' table). */
  constructor(private readonly components: Record<string, JsonSchema>) {}

  /** A `$ref` to the message's schema (or a well-known type's JSON form). */
  message(type: protobuf.Type): JsonSchema {
    const name = type.fullName.replace(/^\./, "");
    const wkt = WELL_KNOWN[name];
    if (wkt) return { ...wkt };
    if (this.components[name] === undefined) {
      const schema: JsonSchema = { type: "object", properties: {} };
      this.components[name] = schema; // before the fields: self-references terminate
      const props: Record<string, JsonSchema> = {};
      for (const f of type.fieldsArray) props[lowerCamel(f.name)] = this.field(f);
      schema.properties = props;
      if (type.comment) schema.description = type.comment;
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  private field(f: protobuf.Field): JsonSchema {
    f.resolve();
    const one = this.value(f.type, f.resolvedType);
    const schema: JsonSchema = f.map ? { type: "object", additionalProperties: one } : f.repeated ? { type: "array", items: one } : one;
    return f.comment ? { ...schema, description: f.comment } : schema;
  }

  private value(type: string, resolved: protobuf.Type | protobuf.Enum | null): JsonSchema {
    const s = scalar(type);
    if (s) return s;
    if (resolved && "values" in resolved) return { type: "string", enum: Object.keys(resolved.values) };
    if (resolved) return this.message(resolved as protobuf.Type);
    return {};
  }
}
