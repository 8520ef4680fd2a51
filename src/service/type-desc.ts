/**
 * Plain descriptions of parameter and field types, built once at registration from
 * `design:*` metadata and explicit overrides. The binder, the client and any schema export read
 * these; nothing reads reflect-metadata at call time.
 */
export type TypeDesc =
  | { readonly kind: "string" }
  | { readonly kind: "number" }
  | { readonly kind: "boolean" }
  | { readonly kind: "bigint" }
  | { readonly kind: "date" }
  | { readonly kind: "bytes" }
  /** An uploaded file: bytes plus file name and content type (see `UploadedFile`). */
  | { readonly kind: "file" }
  /** Map<string, V> or Record<string, V>: `as` says which the handler receives. */
  | { readonly kind: "map"; readonly value: TypeDesc; readonly as: "map" | "record" }
  | { readonly kind: "array"; readonly element: TypeDesc }
  /** A decorated class: its fields carry their own metadata. */
  | { readonly kind: "class"; readonly ctor: new () => unknown; readonly fields: readonly FieldDesc[] }
  /** Any JSON-like value (interfaces, unions and `any` all emit `Object`). */
  | { readonly kind: "any" };

/** One field of a decorated class. */
export interface FieldDesc {
  readonly name: string;
  readonly type: TypeDesc;
}

/** What `@Param(...)` / `@Field(...)` accept to override a type metadata cannot tell. */
export type TypeSpec =
  | TypeDesc
  | StringConstructor
  | NumberConstructor
  | BooleanConstructor
  | BigIntConstructor
  | DateConstructor
  | ObjectConstructor
  | MapConstructor
  | ArrayConstructor
  | (abstract new (...args: never[]) => unknown)
  | readonly [TypeSpec];

/**
 * An uploaded multipart file: the part's bytes, with the file name and the part's Content-Type.
 * Declare a parameter of this type to receive them; a `Uint8Array` parameter gets the bytes only.
 */
export class UploadedFile extends Uint8Array {
  filename = "";
  contentType = "application/octet-stream";
  /** Wraps bytes (without copying) with a file name and content type. */
  static wrap(bytes: Uint8Array, filename: string, contentType: string): UploadedFile {
    const f = new UploadedFile(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
    f.filename = filename;
    f.contentType = contentType;
    return f;
  }
}

export const T: {
  readonly string: TypeDesc;
  readonly number: TypeDesc;
  readonly boolean: TypeDesc;
  readonly bigint: TypeDesc;
  readonly date: TypeDesc;
  readonly bytes: TypeDesc;
  readonly file: TypeDesc;
  readonly any: TypeDesc;
  map(value?: TypeSpec): TypeDesc;
  record(value?: TypeSpec): TypeDesc;
  array(element: TypeSpec): TypeDesc;
} = {
  string: { kind: "string" } as TypeDesc,
  number: { kind: "number" } as TypeDesc,
  boolean: { kind: "boolean" } as TypeDesc,
  bigint: { kind: "bigint" } as TypeDesc,
  date: { kind: "date" } as TypeDesc,
  bytes: { kind: "bytes" } as TypeDesc,
  file: { kind: "file" } as TypeDesc,
  any: { kind: "any" } as TypeDesc,
  /** `Map<string, V>` */
  map(value: TypeSpec = T.string): TypeDesc {
    return { kind: "map", value: resolveType(value, "map value"), as: "map" };
  },
  /** `Record<string, V>` */
  record(value: TypeSpec = T.string): TypeDesc {
    return { kind: "map", value: resolveType(value, "record value"), as: "record" };
  },
  /** `V[]` */
  array(element: TypeSpec): TypeDesc {
    return { kind: "array", element: resolveType(element, "array element") };
  },
};

/** Metadata key under which `@Field` records a class's fields. */
export const FIELDS_KEY = Symbol.for("triple-rpc:fields");

interface RawField {
  name: string;
  spec: TypeSpec | undefined;
}

/** Records one field (called by `@Field`). */
export function recordField(target: object, name: string, spec: TypeSpec | undefined): void {
  const ctor = (target as { constructor: object }).constructor;
  const own: RawField[] = Reflect.hasOwnMetadata(FIELDS_KEY, ctor)
    ? Reflect.getOwnMetadata(FIELDS_KEY, ctor)
    : [...(Reflect.getMetadata(FIELDS_KEY, ctor) ?? [])];
  const designType = Reflect.getMetadata("design:type", target, name);
  const i = own.findIndex((f) => f.name === name);
  const entry = { name, spec: spec ?? designType };
  if (i >= 0) own[i] = entry;
  else own.push(entry);
  Reflect.defineMetadata(FIELDS_KEY, own, ctor);
}

const classCache = new WeakMap<object, TypeDesc>();

function isTypeDesc(x: unknown): x is TypeDesc {
  return typeof x === "object" && x !== null && !Array.isArray(x) && typeof (x as TypeDesc).kind === "string";
}

/**
 * Turns a type spec (a constructor from `design:paramtypes`, or an explicit override) into a
 * descriptor. Throws a registration-time error naming `where` for types we cannot bind.
 */
export function resolveType(spec: TypeSpec | undefined, where: string): TypeDesc {
  if (spec === undefined || spec === null) return T.any;
  if (isTypeDesc(spec)) return spec;
  if (Array.isArray(spec)) return T.array(spec[0]);
  switch (spec) {
    case String:
      return T.string;
    case Number:
      return T.number;
    case Boolean:
      return T.boolean;
    case BigInt:
      return T.bigint;
    case Date:
      return T.date;
    case Object:
      return T.any;
    case Array:
      return { kind: "array", element: T.any };
    case Map:
      return T.map(T.string);
    case UploadedFile:
      return T.file;
  }
  if (spec === Uint8Array || spec === Buffer || (typeof spec === "function" && spec.prototype instanceof Uint8Array)) {
    return spec === UploadedFile ? T.file : T.bytes;
  }
  if (typeof spec === "function") {
    const cached = classCache.get(spec);
    if (cached) return cached;
    const raw: RawField[] | undefined = Reflect.getMetadata(FIELDS_KEY, spec);
    if (spec === Promise || spec === Function || (spec as unknown) === Symbol) {
      throw new TypeError(`${where}: type ${spec.name} cannot be bound from a request; declare it with @Param(Type)`);
    }
    if (!raw || raw.length === 0) {
      throw new TypeError(
        `${where}: class ${spec.name} has no @Field() metadata, so it cannot be bound; ` +
          `decorate its fields with @Field() or declare the parameter as @Param(Object)`,
      );
    }
    // Register before resolving fields so self-referencing classes terminate.
    const fields: FieldDesc[] = [];
    const desc: TypeDesc = { kind: "class", ctor: spec as new () => unknown, fields };
    classCache.set(spec, desc);
    try {
      for (const f of raw) fields.push({ name: f.name, type: resolveType(f.spec, `${spec.name}.${f.name}`) });
    } catch (e) {
      classCache.delete(spec);
      throw e;
    }
    return desc;
  }
  throw new TypeError(`${where}: unsupported type ${String(spec)}`);
}
