// Owns `UploadedFile`, `T`, `SYMBOL_METADATA`, `FIELDS_KEY`, … An uploaded multipart file: the
// part's bytes, with the file name and the part's Content-Type. Declare a parameter of this type to
// receive them. Must not change: what a decorated class describes (paths, parameter order, tags):
// the wire depends on it.
import type { Download } from "./download.js";
import type { StreamedFile } from "./file-upload.js";
import { type Constraints, pickConstraints } from "./constraints.js";
import { defineMeta, designMeta, getMeta, hasOwnMeta, TYPE_KIND } from "./metadata.js";

/**
 * Plain descriptions of parameter and field types, built once at registration from
 * `design:*` metadata and explicit overrides. The binder, the client and any schema export read
 * these; nothing reads reflect-metadata at call time.
 */
export type TypeDesc =
  /** A string; `java` makes it the text of a Java value class (`T.bigDecimal`, `T.localDate`, `T.enum(…)`…). */
  | { readonly kind: "string"; readonly java?: JavaText }
  /** A JavaScript number; `proto` picks its protobuf type (double unless said otherwise); `java` a Java `short` or `byte`. */
  | { readonly kind: "number"; readonly proto?: NumberProto; readonly java?: "short" | "byte" }
  | { readonly kind: "boolean" }
  /** A bigint; `java` names it `java.math.BigInteger` for Dubbo's Java serializations (else a Java `long`). */
  | { readonly kind: "bigint"; readonly java?: "java.math.BigInteger" }
  | { readonly kind: "date" }
  | { readonly kind: "bytes" }
  /** An uploaded file: bytes plus file name and content type (see `InMemoryFile`). */
  | { readonly kind: "file" }
  /** A streamed uploaded file: a `StreamedFile` (spilled to disk past a threshold, or streamed to the handler). */
  | { readonly kind: "upload" }
  /** A file or stream result (`@Method({ returns: Download })`): the typed client reads it as a stream. */
  | { readonly kind: "download" }
  /** Map<string, V> or Record<string, V>: `as` says which the handler receives. */
  | { readonly kind: "map"; readonly value: TypeDesc; readonly as: "map" | "record"; readonly java?: JavaMapClass }
  /** An array; `java` names the Java collection or primitive array it is (`T.set`, `T.javaArray`). */
  | { readonly kind: "array"; readonly element: TypeDesc; readonly java?: JavaArrayClass }
  /** A decorated class: its fields carry their own metadata. */
  | { readonly kind: "class"; readonly ctor: new () => unknown; readonly fields: readonly FieldDesc[] }
  /** Any JSON-like value (interfaces, unions and `any` all emit `Object`). */
  | { readonly kind: "any" };

/**
 * The Java value classes a string stands for (exact text, never a float or a `Date` on the way;
 * docs/schema.md has each one's form): `decimal` `java.math.BigDecimal`, the `java.time` classes,
 * `timestamp` `java.sql.Timestamp`, `char` a Java `char`, `enum` a Java enum (`name` its class).
 */
export type JavaTextType =
  | "decimal"
  | "localDate"
  | "localTime"
  | "localDateTime"
  | "instant"
  | "offsetDateTime"
  | "zonedDateTime"
  | "duration"
  | "timestamp"
  | "char"
  | "enum";

/** A string's Java value class: its kind, its Java class name, an enum's constants. */
export interface JavaText {
  readonly type: JavaTextType;
  readonly name: string;
  readonly values?: readonly string[];
}

/** The Java maps a `T.map` can be besides `java.util.Map` (written with their class name). */
type JavaMapClass = "java.util.TreeMap" | "java.util.LinkedHashMap";

/** A Java `Set` (`T.set`) or primitive array (`T.javaArray`: `[I` int[], `[J` long[] …). */
type JavaArrayClass = "java.util.Set" | "[I" | "[J" | "[D" | "[F" | "[S" | "[Z";

/** The protobuf types a JavaScript number can travel as. */
export type NumberProto = "double" | "float" | "int32" | "uint32" | "int64" | "uint64";

/** One field of a decorated class. */
export interface FieldDesc {
  readonly name: string;
  readonly type: TypeDesc;
  /** May be absent (`@Field({ optional: true })`); required fields that are missing are a 400. */
  readonly optional: boolean;
  /** Field number in the class's derived protobuf message (default: declaration order, from 1). */
  readonly tag: number | undefined;
  /** Validation constraints (`@Field({ min, pattern, … })`), checked against the type at registration; undefined: none. */
  readonly constraints: Constraints | undefined;
}

/** Options of `@Field`: its type, presence, field number and validation constraints. */
export interface FieldOptions extends Constraints {
  /** Overrides the type from `design:type`. */
  type?: TypeSpec;
  /** The field may be absent. */
  optional?: boolean;
  /** Its field number in the derived protobuf message. */
  tag?: number;
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
  | (abstract new (
      ...args: never[]
    ) => unknown)
  | readonly [TypeSpec];

/** The phantom key of {@link TypeOf}: never present at run time. */
declare const VALUE: unique symbol;

/**
 * A descriptor that also tells the compiler what its values are (`T.localDate` is
 * `TypeOf<string>`): what lets `@Method({ params })` and `@Field(Type)` be checked against the
 * signature. Type-level only: the object is a plain {@link TypeDesc}.
 */
export type TypeOf<V> = TypeDesc & { readonly [VALUE]?: V };

/**
 * The TypeScript type of the values the binder hands a method for a type spec: `String` string,
 * `Number` number, `Boolean` boolean, `BigInt` bigint, `Date` Date, `Map` `Map<string, string>`,
 * `[S]` an array, a class (`Uint8Array`, `InMemoryFile`, `StreamedFile`, a decorated class) its
 * instances, a `T.*` descriptor its {@link TypeOf} type, `Object` and an untyped descriptor
 * `any`. A bare `Array` (no element type, refused at registration) is a type no parameter fits.
 */
export type ValueOf<S> = S extends StringConstructor
  ? string
  : S extends NumberConstructor
    ? number
    : S extends BooleanConstructor
      ? boolean
      : S extends BigIntConstructor
        ? bigint
        : S extends DateConstructor
          ? Date
          : S extends ArrayConstructor
            ? { error: "Array has no element type: write [String], [Item] (an array of one type)" }
            : S extends MapConstructor
              ? Map<string, string>
              : S extends ObjectConstructor
                ? any
                : S extends readonly [infer E]
                  ? ValueOf<E>[]
                  : S extends abstract new (
                        ...args: never[]
                      ) => infer I
                    ? I
                    : S extends { readonly [VALUE]?: infer V }
                      ? unknown extends V
                        ? any
                        : V
                      : any;

/**
 * An uploaded multipart file held in memory: the part's bytes, with the file name and the part's Content-Type.
 * Declare a parameter of this type to receive them; a `Uint8Array` parameter gets the bytes only.
 */
export class InMemoryFile extends Uint8Array {
  filename = "";
  contentType = "application/octet-stream";
  /** Wraps bytes (without copying) with a file name and content type. */
  static wrap(bytes: Uint8Array, filename: string, contentType: string): InMemoryFile {
    const f = new InMemoryFile(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
    f.filename = filename;
    f.contentType = contentType;
    return f;
  }
}

export const T: {
  readonly string: TypeOf<string>;
  readonly number: TypeOf<number>;
  readonly boolean: TypeOf<boolean>;
  readonly bigint: TypeOf<bigint>;
  readonly date: TypeOf<Date>;
  readonly bytes: TypeOf<Uint8Array>;
  readonly file: TypeOf<InMemoryFile>;
  /** A streamed uploaded file ({@link StreamedFile}). */
  readonly upload: TypeOf<StreamedFile>;
  /** A file or stream result ({@link Download}). */
  readonly download: TypeOf<Download>;
  readonly any: TypeOf<any>;
  /** A number sent as protobuf `int32` (an integer in ±2³¹). */
  readonly int32: TypeOf<number>;
  /** A number sent as protobuf `uint32` (an integer in 0…2³²−1). */
  readonly uint32: TypeOf<number>;
  /** A number sent as protobuf `int64` (a safe integer; ProtoJSON writes it as a string). */
  readonly int64: TypeOf<number>;
  /** A number sent as protobuf `uint64`. */
  readonly uint64: TypeOf<number>;
  /** A number sent as protobuf `float` (32-bit). */
  readonly float: TypeOf<number>;
  /** A number sent as protobuf `double` (the default for `number`). */
  readonly double: TypeOf<number>;
  /**
   * A bigint that is a Java `java.math.BigInteger` in Dubbo's hessian2 and fastjson2 (any size;
   * `bigint` alone is a Java `long`). Elsewhere the same as `bigint` (protobuf `int64`).
   */
  readonly bigInteger: TypeOf<bigint>;
  /** A Java `short` (a number from -32768 to 32767; `java.lang.Short` when optional). */
  readonly short: TypeOf<number>;
  /** A Java `byte` (a number from -128 to 127; `java.lang.Byte` when optional). */
  readonly byte: TypeOf<number>;
  /** A Java `char`: a string of one UTF-16 unit (`java.lang.Character` when optional). */
  readonly char: TypeOf<string>;
  /** `java.math.BigDecimal`, exactly: its text as Java's `toString()` writes it (`"1.10"`, `"1E+3"`), scale kept. */
  readonly bigDecimal: TypeOf<string>;
  /** `java.time.LocalDate` as ISO text (`"2024-01-31"`). */
  readonly localDate: TypeOf<string>;
  /** `java.time.LocalTime` as ISO text (`"10:15:30.123456789"`), to the nanosecond. */
  readonly localTime: TypeOf<string>;
  /** `java.time.LocalDateTime` as ISO text (`"2024-01-31T10:15:30.5"`), to the nanosecond. */
  readonly localDateTime: TypeOf<string>;
  /** `java.time.Instant` as ISO text in UTC (`"2024-01-31T10:15:30.000000001Z"`), to the nanosecond. */
  readonly instant: TypeOf<string>;
  /** `java.time.OffsetDateTime` as ISO text with its offset (`"2024-01-31T10:15:30+01:00"`). */
  readonly offsetDateTime: TypeOf<string>;
  /** `java.time.ZonedDateTime` as Java writes it (`"2024-03-31T03:30+02:00[Europe/Berlin]"`). */
  readonly zonedDateTime: TypeOf<string>;
  /** `java.time.Duration` as ISO text (`"PT8H6M12.345S"`), to the nanosecond. */
  readonly duration: TypeOf<string>;
  /** `java.sql.Timestamp` as ISO instant text in UTC (`"2024-01-31T10:15:30.123Z"`). */
  readonly timestamp: TypeOf<string>;
  /** A Java enum `name` (its class) with these constants: a string, one of `values`. */
  enum<const V extends readonly string[]>(name: string, values: V): TypeOf<V[number]>;
  /** A `java.util.Set` of `element`: an array (or a `Set`) on our side, written as a `HashSet`. */
  set<S extends TypeSpec>(element: S): TypeOf<ValueOf<S>[]>;
  /** A `java.util.TreeMap<String, V>`: a `Map` on our side. */
  treeMap<S extends TypeSpec = StringConstructor>(value?: S): TypeOf<Map<string, ValueOf<S>>>;
  /** A `java.util.LinkedHashMap<String, V>`: a `Map` on our side (its order kept). */
  linkedHashMap<S extends TypeSpec = StringConstructor>(value?: S): TypeOf<Map<string, ValueOf<S>>>;
  /** A Java primitive array of `element` (`T.int32` int[], `T.bigint` or `T.int64` long[], `T.double` double[], `T.float` float[], `T.short` short[], `T.boolean` boolean[]); `byte[]` is `Uint8Array`. */
  javaArray<D extends TypeDesc>(element: D): TypeOf<ValueOf<D>[]>;
  map<S extends TypeSpec = StringConstructor>(value?: S): TypeOf<Map<string, ValueOf<S>>>;
  record<S extends TypeSpec = StringConstructor>(value?: S): TypeOf<Record<string, ValueOf<S>>>;
  array<S extends TypeSpec>(element: S): TypeOf<ValueOf<S>[]>;
} = {
  string: { kind: "string" } as TypeDesc,
  number: { kind: "number" } as TypeDesc,
  boolean: { kind: "boolean" } as TypeDesc,
  bigint: { kind: "bigint" } as TypeDesc,
  date: { kind: "date" } as TypeDesc,
  bytes: { kind: "bytes" } as TypeDesc,
  file: { kind: "file" } as TypeDesc,
  upload: { kind: "upload" } as TypeDesc,
  download: { kind: "download" } as TypeDesc,
  any: { kind: "any" } as TypeDesc,
  int32: { kind: "number", proto: "int32" } as TypeDesc,
  uint32: { kind: "number", proto: "uint32" } as TypeDesc,
  int64: { kind: "number", proto: "int64" } as TypeDesc,
  uint64: { kind: "number", proto: "uint64" } as TypeDesc,
  float: { kind: "number", proto: "float" } as TypeDesc,
  double: { kind: "number", proto: "double" } as TypeDesc,
  bigInteger: { kind: "bigint", java: "java.math.BigInteger" } as TypeDesc,
  short: { kind: "number", proto: "int32", java: "short" } as TypeDesc,
  byte: { kind: "number", proto: "int32", java: "byte" } as TypeDesc,
  char: javaText("char", "char"),
  bigDecimal: javaText("decimal", "java.math.BigDecimal"),
  localDate: javaText("localDate", "java.time.LocalDate"),
  localTime: javaText("localTime", "java.time.LocalTime"),
  localDateTime: javaText("localDateTime", "java.time.LocalDateTime"),
  instant: javaText("instant", "java.time.Instant"),
  offsetDateTime: javaText("offsetDateTime", "java.time.OffsetDateTime"),
  zonedDateTime: javaText("zonedDateTime", "java.time.ZonedDateTime"),
  duration: javaText("duration", "java.time.Duration"),
  timestamp: javaText("timestamp", "java.sql.Timestamp"),
  enum(name: string, values: readonly string[]): TypeDesc {
    if (typeof name !== "string" || !/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(name)) {
      throw new TypeError(`T.enum: "${String(name)}" is not a Java class name (like "org.example.Color")`);
    }
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === "string" && /^[A-Za-z_$][\w$]*$/.test(v))) {
      throw new TypeError(`T.enum("${name}", …): the constants must be a non-empty array of Java identifiers (like ["RED", "GREEN"])`);
    }
    return { kind: "string", java: { type: "enum", name, values: [...values] } };
  },
  set(element: TypeSpec): TypeDesc {
    return { kind: "array", element: resolveType(element, "set element"), java: "java.util.Set" };
  },
  treeMap(value: TypeSpec = T.string): TypeDesc {
    return { kind: "map", value: resolveType(value, "map value"), as: "map", java: "java.util.TreeMap" };
  },
  linkedHashMap(value: TypeSpec = T.string): TypeDesc {
    return { kind: "map", value: resolveType(value, "map value"), as: "map", java: "java.util.LinkedHashMap" };
  },
  javaArray(element: TypeDesc): TypeDesc {
    const java = primitiveArrayClass(element);
    if (!java) {
      throw new TypeError(
        "T.javaArray: the element must be T.int32, T.int64, T.bigint, T.double, T.number, T.float, T.short or T.boolean (byte[] is Uint8Array; arrays of classes are T.array)",
      );
    }
    return { kind: "array", element, java };
  },
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

function javaText(type: JavaTextType, name: string): TypeDesc {
  return { kind: "string", java: { type, name } };
}

/** The Java primitive array class of an element type, if it has one. */
function primitiveArrayClass(t: TypeDesc): JavaArrayClass | undefined {
  if (t.kind === "boolean") return "[Z";
  if (t.kind === "bigint" && !t.java) return "[J";
  if (t.kind !== "number") return undefined;
  if (t.java === "short") return "[S";
  if (t.java === "byte") return undefined;
  switch (t.proto) {
    case "int32":
      return "[I";
    case "int64":
      return "[J";
    case "float":
      return "[F";
    case undefined:
    case "double":
      return "[D";
    default:
      return undefined;
  }
}

/**
 * `Symbol.metadata`, where standard (TC39) decorators keep a class's metadata (TypeScript 5.2+,
 * esbuild). Node 20 has no such symbol, so it is defined here as TypeScript's release notes
 * suggest; decorated classes import their decorators from the package, which loads this module,
 * so the symbol exists before any of them is defined.
 */
export const SYMBOL_METADATA: symbol = ((Symbol as { metadata?: symbol }).metadata ??= Symbol.for("Symbol.metadata"));

/** Metadata key under which `@Field` records a class's fields. */
export const FIELDS_KEY = Symbol.for("triple-rpc:fields");

/** A field as `@Field` records it (`spec` undefined: no type was declared or emitted). */
export interface RawField {
  name: string;
  spec: TypeSpec | undefined;
  /** The compiler's `design:type`, when it emitted one and a type was also declared (checked to agree). */
  design?: unknown;
  optional: boolean;
  tag: number | undefined;
  constraints?: Constraints;
}

/** Marks a class that can never be a bound parameter (the call context: `@Ctx()` injects it). */
export const NOT_BINDABLE = Symbol.for("triple-rpc:not-bindable");

/** Records one field (called by `@Field`). */
export function recordField(target: object, name: string, options: FieldOptions): void {
  const ctor = (target as { constructor: object }).constructor;
  const own: RawField[] = hasOwnMeta(FIELDS_KEY, ctor) ? (getMeta(FIELDS_KEY, ctor) as RawField[]) : [...(getMeta<RawField[]>(FIELDS_KEY, ctor) ?? [])];
  const designType = designMeta("design:type", target, name) as TypeSpec | undefined;
  const i = own.findIndex((f) => f.name === name);
  const entry: RawField = {
    name,
    spec: options.type ?? designType,
    design: options.type !== undefined ? designType : undefined,
    optional: options.optional === true,
    tag: options.tag,
    constraints: pickConstraints(options),
  };
  if (i >= 0) own[i] = entry;
  else own.push(entry);
  defineMeta(FIELDS_KEY, own, ctor);
}

const classCache = new WeakMap<object, TypeDesc>();

function isTypeDesc(x: unknown): x is TypeDesc {
  return typeof x === "object" && x !== null && !Array.isArray(x) && typeof (x as TypeDesc).kind === "string";
}

/** The descriptor of a class from its `@Field` metadata (cached; self-references terminate). */
function classType(spec: new () => unknown, where: string): TypeDesc {
  const cached = classCache.get(spec);
  if (cached) return cached;
  if (spec === (Promise as unknown) || spec === (Function as unknown) || (spec as unknown) === Symbol) {
    throw new TypeError(
      `${where}: type ${spec.name} cannot be bound from a request; declare its type with @Param(Type)` +
        (spec === (Function as unknown) ? " (a CallContext parameter is injected with @Ctx() instead)" : ""),
    );
  }
  const mark = (spec as unknown as Record<symbol, unknown>)[NOT_BINDABLE];
  if (typeof mark === "string") throw new TypeError(`${where}: ${mark}`);
  const raw = rawFieldsOf(spec);
  if (!raw || raw.length === 0) {
    throw new TypeError(
      `${where}: class ${spec.name} has no @Field() metadata, so it cannot be bound; ` +
        `decorate its fields with @Field() or declare the parameter as @Param(Object)`,
    );
  }
  // Register before resolving fields so self-referencing classes terminate.
  const fields: FieldDesc[] = [];
  const desc: TypeDesc = { kind: "class", ctor: spec, fields };
  classCache.set(spec, desc);
  try {
    for (const f of raw) {
      const fwhere = `${spec.name}.${f.name}`;
      if (f.spec === undefined) throw untypedField(fwhere);
      const type = resolveType(f.spec, fwhere);
      checkDeclaredType(type, f.design, fwhere);
      // The constraints are checked against the type by describeService (the web client's reader skips them).
      fields.push({ name: f.name, type, optional: f.optional, tag: f.tag, constraints: f.constraints });
    }
  } catch (e) {
    classCache.delete(spec);
    throw e;
  }
  return desc;
}

/** A class's `@Field` records: legacy decorators' (our metadata store), else standard decorators' `Symbol.metadata`. */
function rawFieldsOf(ctor: object): RawField[] | undefined {
  const legacy = getMeta<RawField[]>(FIELDS_KEY, ctor);
  if (legacy) return legacy;
  const meta = (ctor as Record<symbol, Record<symbol, unknown> | undefined>)[SYMBOL_METADATA];
  return meta?.[FIELDS_KEY] as RawField[] | undefined;
}

/**
 * A field without a type: the compiler emitted no `design:type` (standard decorators, esbuild,
 * tsx). Binding it as "any JSON" would lose dates, numbers and nested classes without a word.
 */
function untypedField(where: string): TypeError {
  return new TypeError(
    `${where} has no type, because the compiler emitted no design:type metadata (standard decorators, esbuild and tsx never do). ` +
      `Declare it: @Field(String), @Field([Item]), @Field({ type: Date, optional: true }) (or @Field(Object) for any JSON), ` +
      `or compile with tsc and "experimentalDecorators" + "emitDecoratorMetadata"`,
  );
}

/** `StreamedFile` (upload) and `Download` (download), by the mark they carry rather than by identity. */
function markedKind(x: unknown): "upload" | "download" | undefined {
  const kind = typeof x === "function" ? (x as { [TYPE_KIND]?: unknown })[TYPE_KIND] : undefined;
  return kind === "upload" || kind === "download" ? kind : undefined;
}

/** The kinds a declared type may have when the compiler's metadata names `design` (undefined: any kind). */
function kindsOf(design: unknown): readonly string[] | undefined {
  switch (design) {
    case String:
      return ["string"];
    case Number:
      return ["number"];
    case Boolean:
      return ["boolean"];
    case BigInt:
      return ["bigint"];
    case Date:
      return ["date"];
    case Array:
      return ["array"];
    case Map:
      return ["map"];
  }
  const marked = markedKind(design);
  if (marked) return [marked];
  if (typeof design === "function" && (design === Uint8Array || design.prototype instanceof Uint8Array)) return ["bytes", "file"];
  // Object (interfaces, unions, any), Promise, Function, a class: no kind to hold the declaration to.
  return undefined;
}

/** The compiler's name for a `design:*` type, for messages. */
function designName(design: unknown): string {
  return typeof design === "function" ? design.name : String(design);
}

/**
 * A declared type that contradicts the compiler's metadata (`@Param({ type: Number }) n: string`)
 * is a registration error: one of the two is wrong, and binding by the declaration would hand the
 * method values of a type its signature does not have. `Object` declared (any JSON) is always taken.
 */
export function checkDeclaredType(declared: TypeDesc, design: unknown, where: string): void {
  if (declared.kind === "any") return;
  const kinds = kindsOf(design);
  if (!kinds || kinds.includes(declared.kind)) return;
  throw new TypeError(
    `${where}: the declared type (${declared.kind}) contradicts the TypeScript type the compiler emitted (${designName(design)}); ` +
      `make the declaration and the signature agree (or declare Object for any JSON)`,
  );
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
      throw new TypeError(
        `${where}: an array without an element type (the compiler's metadata says only Array, not what it holds). ` +
          `Declare it: @Param({ name: "tags", type: [String] }) or @Method({ params: [{ name: "tags", type: [String] }] }), @Field([String]); [Object] for any JSON`,
      );
    case Map:
      return T.map(T.string);
    case InMemoryFile:
      return T.file;
  }
  const marked = markedKind(spec);
  if (marked) return T[marked];
  // Buffer is a Uint8Array subclass (and absent in browsers, where contracts load too).
  if (spec === Uint8Array || (typeof spec === "function" && spec.prototype instanceof Uint8Array)) {
    return spec === InMemoryFile ? T.file : T.bytes;
  }
  if (typeof spec === "function") return classType(spec as new () => unknown, where);
  throw new TypeError(`${where}: unsupported type ${String(spec)}`);
}
