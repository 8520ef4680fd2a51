/**
 * A protobuf schema as plain data: the one model the derived schema is built into and that every
 * rendering reads (protobufjs types for encoding, `.proto` text for export, FileDescriptorProtos
 * for server reflection). Type names are fully qualified, without the leading dot.
 */

/** The scalar types of proto3 that the derived schema uses. */
type ScalarType = "double" | "float" | "int32" | "uint32" | "int64" | "uint64" | "bool" | "string" | "bytes";

/** A field's type: a scalar, or a message by its full name. */
export type FieldType = { readonly scalar: ScalarType } | { readonly message: string };

/** One field of a message. */
export interface SchemaField {
  readonly name: string;
  readonly number: number;
  readonly type: FieldType;
  /** `repeated` (never together with `map` or `optional`). */
  readonly repeated: boolean;
  /** A `map<string, type>` field. */
  readonly map: boolean;
  /** proto3 `optional`: the field has presence (scalars only; messages always have it). */
  readonly optional: boolean;
  /**
   * The binder refuses a request without it (a parameter or `@Field` not declared optional);
   * not part of the .proto, recorded by the schema lock.
   */
  readonly required?: boolean;
  /** The comment above the field (lines separated by `\n`): its description and validation constraints. */
  readonly comment?: string;
}

/** A message type. */
export interface SchemaMessage {
  /** Full name: `inventory.AdjustStockRequest`. */
  readonly fullName: string;
  readonly fields: readonly SchemaField[];
}

/** One rpc. */
export interface SchemaMethod {
  readonly name: string;
  /** Full names of the request and response messages. */
  readonly input: string;
  readonly output: string;
  readonly clientStreaming: boolean;
  readonly serverStreaming: boolean;
  /** `option idempotency_level = NO_SIDE_EFFECTS` (`@Method({ idempotent: true })`). */
  readonly idempotent: boolean;
}

/** A service. */
interface SchemaService {
  /** Full name: `inventory.InventoryService`. */
  readonly fullName: string;
  readonly methods: readonly SchemaMethod[];
}

/** One .proto file. */
export interface SchemaFile {
  /** Its path, e.g. `inventory/inventory_service.proto`. */
  readonly name: string;
  /** Its package (empty for none). */
  readonly package: string;
  /** Paths of the files it imports. */
  readonly dependencies: readonly string[];
  readonly messages: readonly SchemaMessage[];
  readonly services: readonly SchemaService[];
}

/** The well-known types the derived schema uses, and the file each lives in. */
export const WKT_FILES: Readonly<Record<string, string>> = {
  "google.protobuf.Timestamp": "google/protobuf/timestamp.proto",
  "google.protobuf.Value": "google/protobuf/struct.proto",
  "google.protobuf.Struct": "google/protobuf/struct.proto",
  "google.protobuf.ListValue": "google/protobuf/struct.proto",
  "google.protobuf.Empty": "google/protobuf/empty.proto",
};

/** The package of a full name (`inventory` of `inventory.Item`; empty without a dot). */
export function packageOf(fullName: string): string {
  const dot = fullName.lastIndexOf(".");
  return dot < 0 ? "" : fullName.slice(0, dot);
}

/** The simple name of a full name (`Item` of `inventory.Item`). */
export function simpleName(fullName: string): string {
  return fullName.slice(fullName.lastIndexOf(".") + 1);
}
