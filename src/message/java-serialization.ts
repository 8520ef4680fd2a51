// Owns `SerializationError`, `JavaException`, `javaSerialization`, `javaException`, … Bytes that
// are not a value of the serialization. Must not change: gRPC's wire rules (5-byte message prefix,
// grpc-status in trailers) that grpc-js and other peers rely on.
import { bitsForDigits, countDigits, numberDigitsLimit } from "../codec/big-numbers.js";
import { bigIntFromWords, wordsBitLength } from "../codec/big-words.js";
import { HessianError, JAVA_CLASS, readHessian } from "../serialization/hessian2/reader.js";
import { writeHessian } from "../serialization/hessian2/writer.js";
import { JsonbError, readJsonb, writeJsonb } from "../serialization/jsonb/index.js";
import type { TypeDesc } from "../service/type-desc.js";
import { javaTextOf } from "./java-text-read.js";

/**
 * Dubbo Java's serializations of one value inside the Triple wrapper: hessian2 (Hessian 2.0,
 * `serializeType` `hessian4` from Java, `hessian2` from dubbo-go) and fastjson2 (a 4-byte
 * big-endian length, then fastjson2's binary JSONB).
 */
export interface JavaSerialization {
  /** Our name for it (the client option). */
  readonly name: "hessian2" | "fastjson2";
  /** The `serializeType` our client writes: what Dubbo Java writes. */
  readonly wire: string;
  /** One value; throws {@link SerializationError} on bytes that are not one. */
  decode(bytes: Uint8Array): unknown;
  /** One value, as `t` declares it. */
  encode(value: unknown, t: TypeDesc): Buffer;
}

/** Bytes that are not a value of the serialization. */
export class SerializationError extends Error {
  override name = "SerializationError";
}

/** A Java exception read from a wrapper: its class and message. */
export class JavaException extends Error {
  override name = "JavaException";
  constructor(
    readonly javaClass: string,
    message: string,
    /** The decoded exception object (its fields). */
    readonly fields: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Limits on one decoded value (nesting, values, big numbers: the server's `limits.maxNumberDigits` in force), shared by both readers. */
const readLimits = () => ({ maxDepth: 64, maxNodes: 1_000_000, maxNumberDigits: numberDigitsLimit() });

function wrapErrors<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof HessianError || e instanceof JsonbError) throw new SerializationError(e.message, { cause: e });
    throw e;
  }
}

const HESSIAN2: JavaSerialization = {
  name: "hessian2",
  wire: "hessian4",
  decode: (bytes) => wrapErrors(() => readHessian(bytes, readLimits())),
  encode: (value, t) => writeHessian(value, t),
};

const FASTJSON2: JavaSerialization = {
  name: "fastjson2",
  wire: "fastjson2",
  decode(bytes) {
    if (bytes.length < 4) throw new SerializationError("fastjson2: fewer than 4 bytes (the length prefix)");
    const n = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).readInt32BE(0);
    if (n !== bytes.length - 4) throw new SerializationError(`fastjson2: length prefix ${n}, ${bytes.length - 4} bytes follow`);
    return wrapErrors(() => readJsonb(bytes.subarray(4), readLimits()));
  },
  encode(value, t) {
    const body = writeJsonb(value, t);
    const out = Buffer.allocUnsafe(4 + body.length);
    out.writeInt32BE(body.length, 0);
    body.copy(out, 4);
    return out;
  },
};

/** The serialization of a wrapper's `serializeType`, when it is one of Dubbo Java's. */
export function javaSerialization(serializeType: string): JavaSerialization | undefined {
  switch (serializeType) {
    case "hessian2":
    case "hessian4":
      return HESSIAN2;
    case "fastjson2":
      return FASTJSON2;
    default:
      return undefined;
  }
}

/**
 * A decoded Java exception (a `java.lang.Throwable` object: its fields include `detailMessage`
 * and `stackTrace`, as hessian2 and Dubbo's field-based fastjson2 write it; fastjson2 without
 * `FieldBased` writes `message`), or undefined. `flagged` (the response carried Dubbo's
 * `tri-exception-code`): the value is an exception whatever its shape (its class, else
 * `java.lang.Exception`; its message field, else a string value's text).
 */
export function javaException(v: unknown, flagged = false): JavaException | undefined {
  if (typeof v !== "object" || v === null) {
    return flagged ? new JavaException("java.lang.Exception", typeof v === "string" ? v : "", {}) : undefined;
  }
  const o = v as Record<string | symbol, unknown>;
  const cls = o[JAVA_CLASS];
  if (!flagged) {
    if (typeof cls !== "string" || !("stackTrace" in o)) return undefined;
    if (!("detailMessage" in o) && !("message" in o)) return undefined;
  }
  const msg = o.detailMessage ?? o.message;
  return new JavaException(
    typeof cls === "string" ? javaLangName(cls) : "java.lang.Exception",
    typeof msg === "string" ? msg : "",
    o as Record<string, unknown>,
  );
}

/**
 * fastjson2 writes these `java.lang` throwables by their simple name (its `TypeUtils`
 * `NAME_MAPPINGS`: `IllegalArgumentException`, not `java.lang.IllegalArgumentException`) and
 * reads both; we give their full name, as hessian2 does.
 */
const FASTJSON2_SIMPLE_NAMES = new Set(
  (
    "Exception RuntimeException IllegalAccessError IllegalAccessException IllegalArgumentException " +
    "IllegalMonitorStateException IllegalStateException IllegalThreadStateException IndexOutOfBoundsException " +
    "InstantiationError InstantiationException InternalError InterruptedException LinkageError " +
    "NegativeArraySizeException NoClassDefFoundError NoSuchFieldError NoSuchFieldException NoSuchMethodError " +
    "NoSuchMethodException NullPointerException NumberFormatException OutOfMemoryError SecurityException " +
    "StackOverflowError StringIndexOutOfBoundsException TypeNotPresentException VerifyError"
  ).split(" "),
);

const javaLangName = (cls: string): string => (FASTJSON2_SIMPLE_NAMES.has(cls) ? `java.lang.${cls}` : cls);

const DEFAULTS: Partial<Record<TypeDesc["kind"], unknown>> = { number: 0, boolean: false, bigint: 0n };

/** hessian-lite's `java.sql.Timestamp`: an object holding its date in `value`. */
const isTimestamp = (v: unknown): boolean =>
  typeof v === "object" &&
  v !== null &&
  (v as Record<symbol, unknown>)[JAVA_CLASS] === "java.sql.Timestamp" &&
  (v as { value?: unknown }).value instanceof Date;

/** Caucho Hessian writes a lone Short, Byte or Float as an object of one of these, its value in `_value`. */
const HANDLES = new Set(["com.caucho.hessian.io.ShortHandle", "com.caucho.hessian.io.ByteHandle", "com.caucho.hessian.io.FloatHandle"]);

/**
 * A Java object that stands for a plain value: Caucho's number handles, an enum (`{ name }`)
 * where a string is declared, and hessian2's `java.math` numbers: a `BigInteger` (written field
 * by field: `signum` and the magnitude `mag`, big-endian 32-bit words) and a `BigDecimal` (its
 * text in `value`, as hessian-lite's StringValueSerializer writes it), as the declared type takes
 * them (a `bigint`, a `number`, their text for a `string`).
 */
function plainValue(v: object, t: TypeDesc): unknown {
  const o = v as Record<string | symbol, unknown>;
  const cls = o[JAVA_CLASS];
  if (typeof cls !== "string") return v;
  if (HANDLES.has(cls)) return o._value;
  if (cls === "java.math.BigInteger") return bigInteger(o, t) ?? v;
  const time = javaTime(o, cls);
  if (time !== undefined) return time;
  if (cls === "java.math.BigDecimal" && typeof o.value === "string") return bigDecimal(o.value, t);
  const keys = Object.keys(o);
  if (t.kind === "string" && keys.length === 1 && keys[0] === "name" && typeof o.name === "string") return o.name;
  return v;
}

/**
 * A hessian2 `BigInteger` (its fields `signum` and `mag`, big-endian 32-bit words) as a bigint:
 * its size checked against `limits.maxNumberDigits` first, then converted in linear time.
 */
function bigInteger(o: Record<string, unknown>, t: TypeDesc): unknown {
  const { signum, mag } = o;
  if ((signum !== -1 && signum !== 0 && signum !== 1) || !Array.isArray(mag)) return undefined;
  for (const w of mag) if (!Number.isInteger(w)) return undefined;
  const words = mag as number[];
  const max = numberDigitsLimit();
  const bits = wordsBitLength(words);
  if (bits > bitsForDigits(max)) {
    throw new SerializationError(
      `a java.math.BigInteger of ${words.length} words (${bits} bits) is larger than this server takes (limits.maxNumberDigits: ${max} digits, ${bitsForDigits(max)} bits)`,
    );
  }
  const b = bigIntFromWords(words, signum === -1);
  if (t.kind === "string") return b.toString();
  if (t.kind === "number" && b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(b);
  return b;
}

const pad = (n: unknown, w = 2): string => String(n).padStart(w, "0");
const int = (x: unknown): x is number => Number.isSafeInteger(x);

/**
 * hessian-lite writes `java.time` values as handle objects (`…hessian.io.java8.LocalDateHandle`
 * { year, month, day }, `LocalTimeHandle` { hour, minute, second, nano }, `LocalDateTimeHandle`
 * { date, time }, `InstantHandle` { seconds, nanos }, `OffsetDateTimeHandle` and
 * `ZonedDateTimeHandle` { dateTime, offset: `ZoneOffsetHandle` { seconds }, zoneId }). Local
 * values → ISO text without a zone (as JSONB's), instants → `Date`; undefined for anything else.
 */
function javaTime(o: Record<string, unknown>, cls: string): unknown {
  const m = /\.hessian\.[\w.]*\.(\w+Handle)$/.exec(cls);
  if (!m) return undefined;
  switch (m[1]) {
    case "LocalDateHandle":
      return localDate(o);
    case "LocalTimeHandle":
      return localTime(o);
    case "LocalDateTimeHandle":
      return localDateTime(o);
    case "InstantHandle": {
      const d = int(o.seconds) && int(o.nanos) ? new Date(o.seconds * 1000 + Math.floor(o.nanos / 1e6)) : undefined;
      return d && !Number.isNaN(d.getTime()) ? d : undefined;
    }
    case "OffsetDateTimeHandle":
    case "ZonedDateTimeHandle": {
      const local = localDateTime(o.dateTime);
      const off = (o.offset as Record<string, unknown> | null)?.seconds;
      if (local === undefined || !int(off)) return undefined;
      const d = new Date(`${local}Z`);
      return Number.isNaN(d.getTime()) ? undefined : new Date(d.getTime() - off * 1000);
    }
  }
  return undefined;
}

function localDate(x: unknown): string | undefined {
  const o = x as Record<string, unknown> | null;
  if (!o || !int(o.year) || !int(o.month) || !int(o.day)) return undefined;
  return `${pad(o.year, 4)}-${pad(o.month)}-${pad(o.day)}`;
}

function localTime(x: unknown): string | undefined {
  const o = x as Record<string, unknown> | null;
  if (!o || !int(o.hour) || !int(o.minute) || !int(o.second) || !int(o.nano)) return undefined;
  return `${pad(o.hour)}:${pad(o.minute)}:${pad(o.second)}.${pad(Math.floor(o.nano / 1e6), 3)}`;
}

function localDateTime(x: unknown): string | undefined {
  const o = x as Record<string, unknown> | null;
  const date = localDate(o?.date);
  const time = localTime(o?.time);
  return date === undefined || time === undefined ? undefined : `${date}T${time}`;
}

/** A hessian2 `BigDecimal` (its text), as the declared type takes it; its digits checked against `limits.maxNumberDigits` first. */
function bigDecimal(text: string, t: TypeDesc): unknown {
  const max = numberDigitsLimit();
  const digits = text.length > max ? countDigits(text) : 0;
  if (digits > max)
    throw new SerializationError(`a java.math.BigDecimal of ${digits} digits is larger than this server takes (limits.maxNumberDigits: ${max} digits)`);
  if (t.kind === "string") return text;
  if (t.kind === "bigint" && /^-?\d+$/.test(text)) return BigInt(text);
  const n = Number(text);
  return Number.isFinite(n) ? n : text;
}

/**
 * Turns a decoded Java value into what the declared type's converter takes, in place where it
 * can: fills the fields fastjson2 leaves out (Dubbo writes with `NotWriteDefaultValue`: a Java
 * primitive field at 0 or false is not written) with those defaults, for the number, boolean
 * and bigint fields of decorated classes; unwraps Caucho's Short/Byte/Float handles and enums
 * declared as strings; a number (a `bigint` past 2^53) declared as a string becomes its decimal
 * text. A big number over `limits.maxNumberDigits` throws a {@link SerializationError}. Walks
 * classes, arrays and maps; `v` is a freshly decoded value, bounded by the reader's limits.
 */
export function fillDefaults(v: unknown, t: TypeDesc): unknown {
  if (t.kind === "string" && t.java && v !== null && v !== undefined) return javaTextOf(v, t.java);
  if (t.kind === "date" && isTimestamp(v)) return (v as { value: Date }).value;
  // A Java number where a string is declared: its decimal text, as hessian-lite's
  // Hessian2Input.readString and fastjson2's JSONReader.readString read one.
  if (typeof v === "number" || typeof v === "bigint") return t.kind === "string" ? String(v) : v;
  if (typeof v !== "object" || v === null) return v;
  const plain = plainValue(v, t);
  if (plain !== v) return plain;
  switch (t.kind) {
    case "class": {
      const o = v as Record<string, unknown>;
      for (const f of t.fields) {
        const d = DEFAULTS[f.type.kind];
        if (o[f.name] === undefined && d !== undefined && !f.optional) o[f.name] = d;
        else if (o[f.name] !== undefined) o[f.name] = fillDefaults(o[f.name], f.type);
      }
      return v;
    }
    case "array":
      if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = fillDefaults(v[i], t.element);
      return v;
    case "map":
      if (v instanceof Map) for (const [k, x] of v) v.set(k, fillDefaults(x, t.value));
      else for (const [k, x] of Object.entries(v)) (v as Record<string, unknown>)[k] = fillDefaults(x, t.value);
      return v;
    default:
      return v;
  }
}
