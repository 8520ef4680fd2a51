// Owns `writeJsonb`. One value in JSONB, as `t` declares it (without Dubbo's length prefix). Must
// not change: the bytes stay what fastjson2's JSONB writes and reads; reads stay bounded.
import { bigIntToBytes } from "../../codec/big-words.js";
import { javaClassOf } from "../../service/java-class.js";
import type { FieldDesc, TypeDesc } from "../../service/type-desc.js";
import { ByteWriter } from "../bytes.js";
import { javaClassName } from "../java-types.js";
import { type JavaText } from "../../service/type-desc.js";
import {
  type DateParts,
  type DateTimeParts,
  type DecimalParts,
  formatDuration,
  formatOffset,
  parseJavaValue,
  type SecondsParts,
  type TimeParts,
  type ZonedParts,
} from "../../codec/java-values.js";

/**
 * A fastjson2 JSONB writer shaped like what Dubbo's `FastJson2ObjectOutput` writes
 * (`WriteClassName`, `FieldBased`, `ReferenceDetection`, `WriteNulls`, `WriteNameAsSymbol`):
 * decorated classes as typed objects (`0x92` + their `@JavaClass` name as a symbol, then the
 * object, field names as symbols), maps and arrays without class names (Java reads `HashMap`
 * and `ArrayList`), an object or array met again as a reference to its first path. Numbers as
 * declared (`T.int32` int, `T.int64` long, else double), `bigint` as long (past 64 bits as a
 * `BigInteger`, which a Java `BigInteger` field reads), `Date` as a timestamp.
 */
const ANY: TypeDesc = { kind: "any" };

class JsonbWriter extends ByteWriter {
  private readonly symbols = new Map<string, number>();
  private readonly seen = new Map<object, string>();

  int32(v: number): undefined {
    if (v >= -16 && v <= 47) return this.byte(v & 0xff);
    if (v >= -2048 && v <= 2047) {
      this.byte(0x38 + (v >> 8));
      return this.byte(v & 0xff);
    }
    if (v >= -262144 && v <= 262143) {
      this.byte(0x44 + (v >> 16));
      this.byte((v >> 8) & 0xff);
      return this.byte(v & 0xff);
    }
    this.byte(0x48);
    this.room(4);
    this.buf.writeInt32BE(v, this.len);
    this.len += 4;
  }

  int64(v: bigint): undefined {
    if (v >= -0x80000000n && v <= 0x7fffffffn) {
      const n = Number(v);
      if (n >= -8 && n <= 15) return this.byte(0xe0 + n);
      if (n >= -2048 && n <= 2047) {
        this.byte(0xd0 + (n >> 8));
        return this.byte(n & 0xff);
      }
      if (n >= -262144 && n <= 262143) {
        this.byte(0xc4 + (n >> 16));
        this.byte((n >> 8) & 0xff);
        return this.byte(n & 0xff);
      }
      this.byte(0xbf);
      this.room(4);
      this.buf.writeInt32BE(n, this.len);
      this.len += 4;
      return;
    }
    if (v < -(2n ** 63n) || v >= 2n ** 63n) return this.bigInteger(v);
    this.byte(0xbe);
    this.room(8);
    this.buf.writeBigInt64BE(v, this.len);
    this.len += 8;
  }

  /** A `java.math.BigInteger` as fastjson2 writes one: `0xba` and an int64 when it fits, else `0xbb` and its bytes. */
  private bigIntegerValue(v: bigint): undefined {
    if (v < -(2n ** 63n) || v >= 2n ** 63n) return this.bigInteger(v);
    this.byte(0xba);
    this.int64(v);
  }

  /** Past a long: `0xbb`, the length, then the two's complement bytes (Java's `BigInteger.toByteArray()`). */
  bigInteger(v: bigint): undefined {
    const out = bigIntToBytes(v);
    this.byte(0xbb);
    this.int32(out.length);
    this.raw(out);
  }

  double(v: number): undefined {
    if (v === 0 && !Object.is(v, -0)) return this.byte(0xb2);
    if (v === 1) return this.byte(0xb3);
    if (Number.isSafeInteger(v)) {
      this.byte(0xb4);
      return this.int64(BigInt(v));
    }
    this.byte(0xb5);
    this.room(8);
    this.buf.writeDoubleBE(v, this.len);
    this.len += 8;
  }

  string(s: string): undefined {
    let latin1 = true;
    for (let i = 0; i < s.length && latin1; i++) if (s.charCodeAt(i) > 0xff) latin1 = false;
    if (latin1) {
      if (s.length <= 47) this.byte(0x49 + s.length);
      else {
        this.byte(0x79);
        this.int32(s.length);
      }
      return this.raw(Buffer.from(s, "latin1"));
    }
    const b = Buffer.from(s, "utf8");
    this.byte(0x7a);
    this.int32(b.length);
    this.raw(b);
  }

  date(d: Date): undefined {
    const ms = d.getTime();
    if (Number.isNaN(ms)) throw new TypeError("an invalid Date");
    const s = ms / 1000;
    if (Number.isInteger(s) && s >= -0x80000000 && s <= 0x7fffffff) {
      this.byte(0xac);
      this.room(4);
      this.buf.writeInt32BE(s, this.len);
      this.len += 4;
      return;
    }
    this.byte(0xab);
    this.room(8);
    this.buf.writeBigInt64BE(BigInt(ms), this.len);
    this.len += 8;
  }

  binary(v: Uint8Array): undefined {
    this.byte(0x91);
    this.int32(v.length);
    this.raw(v);
  }

  /** A name or class name as a symbol: text and number the first time, the number after. */
  private symbol(s: string, lead: number): undefined {
    this.byte(lead);
    const n = this.symbols.get(s);
    if (n !== undefined) return this.int32(n);
    const next = this.symbols.size;
    this.symbols.set(s, next);
    this.string(s);
    this.int32(next);
  }

  /** True (and a reference written) when `o` was written before. */
  private ref(o: object, path: string): boolean {
    const first = this.seen.get(o);
    if (first === undefined) {
      this.seen.set(o, path);
      return false;
    }
    this.byte(0x93);
    this.string(first);
    return true;
  }

  value(v: unknown, t: TypeDesc = ANY, path = "$"): undefined {
    if (v === null || v === undefined) return this.byte(0xaf);
    switch (t.kind) {
      case "string":
        return t.java ? this.javaValue(v, t.java) : this.string(String(v));
      case "number":
        if (t.java) return this.smallInt(Number(v), t.java);
        return this.number(Number(v), t.proto);
      case "boolean":
        return this.byte(v ? 0xb1 : 0xb0);
      case "bigint":
        return t.java ? this.bigIntegerValue(BigInt(v as bigint)) : this.int64(BigInt(v as bigint));
      case "date":
        return this.date(v instanceof Date ? v : new Date(v as string));
      case "bytes":
      case "file":
      case "upload":
      case "download":
        return this.binary(v as Uint8Array);
      case "array":
        if (t.java) this.symbol(ARRAY_TYPES[t.java], 0x92);
        return this.array(v instanceof Set ? [...v] : (v as readonly unknown[]), t.element, path);
      case "map":
        if (t.java) this.symbol(t.java === "java.util.TreeMap" ? "TreeMap" : "LM", 0x92);
        return this.map(v as Record<string, unknown> | Map<unknown, unknown>, t.value, path);
      case "class":
        return this.object(v as Record<string, unknown>, javaClassName(t, true), t.fields, path);
      default:
        return this.dynamic(v, path);
    }
  }

  /** A Java `short` (`0xbc`, 16 bits) or `byte` (`0xbd`, 8 bits), as fastjson2 writes them. */
  private smallInt(v: number, java: "short" | "byte"): undefined {
    const short = java === "short";
    if (!Number.isInteger(v) || v < (short ? -32768 : -128) || v > (short ? 32767 : 127)) throw new TypeError(`${v} is not a Java ${java}`);
    this.byte(short ? 0xbc : 0xbd);
    this.room(2);
    if (short) this.buf.writeInt16BE(v, this.len);
    else this.buf.writeInt8(v, this.len);
    this.len += short ? 2 : 1;
  }

  /** A Java value class given as its text (`T.bigDecimal`, `T.localDate`, `T.enum(…)`…), as fastjson2 writes the class. */
  private javaValue(v: unknown, java: JavaText): undefined {
    if (typeof v !== "string") throw new TypeError(`${java.name}: a string expected, got ${typeof v}`);
    let parts: ReturnType<typeof parseJavaValue>;
    try {
      parts = parseJavaValue(java, v);
    } catch (e) {
      throw new TypeError(`${java.name} ${JSON.stringify(v.slice(0, 48))}: ${(e as Error).message}`);
    }
    switch (java.type) {
      case "decimal":
        return this.decimal(parts as DecimalParts);
      case "char":
        this.byte(0x90);
        return this.int32(v.charCodeAt(0));
      case "enum":
        this.symbol(java.name, 0x92);
        return this.string(v);
      case "duration":
        return this.string(formatDuration(parts as SecondsParts));
      default:
        return this.temporal(java.type, parts);
    }
  }

  /**
   * A `BigDecimal` as fastjson2's `writeDecimal`: `0xb8` and a long when the scale is 0 and it
   * fits one, else `0xb9`, the scale, and the unscaled value (an int, a long, or a `BigInteger`).
   */
  private decimal({ unscaled, scale }: DecimalParts): undefined {
    const long = unscaled >= -(2n ** 63n) && unscaled < 2n ** 63n;
    if (scale === 0 && long) {
      this.byte(0xb8);
      return this.int64(unscaled);
    }
    this.byte(0xb9);
    this.int32(scale);
    if (unscaled >= -0x80000000n && unscaled <= 0x7fffffffn) return this.int32(Number(unscaled));
    if (long) return this.int64(unscaled);
    this.bigInteger(unscaled);
  }

  private ymd(d: DateParts): undefined {
    if (d.year < -32768 || d.year > 32767) throw new TypeError(`year ${d.year}: fastjson2 writes a year in 16 bits (-32768 to 32767)`);
    this.room(4);
    this.buf.writeInt16BE(d.year, this.len);
    this.buf[this.len + 2] = d.month;
    this.buf[this.len + 3] = d.day;
    this.len += 4;
  }

  private hms(t: TimeParts): undefined {
    this.byte(t.hour);
    this.byte(t.minute);
    this.byte(t.second);
    this.int32(t.nano);
  }

  /** The `java.time` types and `Timestamp` in fastjson2's temporal forms (`0xa7`–`0xae`). */
  private temporal(type: JavaText["type"], parts: ReturnType<typeof parseJavaValue>): undefined {
    switch (type) {
      case "localDate":
        this.byte(0xa9);
        return this.ymd(parts as DateParts);
      case "localTime":
        this.byte(0xa7);
        return this.hms(parts as TimeParts);
      case "localDateTime": {
        const dt = parts as DateTimeParts;
        this.byte(0xa8);
        this.ymd(dt.date);
        return this.hms(dt.time);
      }
      case "timestamp": {
        // Milliseconds (0xab / 0xac), which fastjson2 reads into a Timestamp whatever the JVM's zone
        // (it reads an instant 0xae not at all, a local date-time in the JVM's zone).
        const s = parts as SecondsParts;
        return this.date(new Date(Number(s.seconds) * 1000 + Math.floor(s.nanos / 1e6)));
      }
      case "instant": {
        const s = parts as SecondsParts;
        this.byte(0xae);
        this.int64(s.seconds);
        return this.int32(s.nanos);
      }
      default: {
        const z = parts as ZonedParts;
        this.byte(0xaa);
        this.ymd(z.dateTime.date);
        this.hms(z.dateTime.time);
        return this.string(z.zone ?? formatOffset(z.offset));
      }
    }
  }

  private number(v: number, proto: string | undefined): undefined {
    if (proto === "int32" || proto === "uint32" || proto === "int64" || proto === "uint64") {
      if (!Number.isSafeInteger(v)) throw new TypeError(`${v} is not an integer`);
      if ((proto === "int32" || proto === "uint32") && v >= -0x80000000 && v <= 0x7fffffff) return this.int32(v);
      return this.int64(BigInt(v));
    }
    if (proto === "float") {
      this.byte(0xb7);
      this.room(4);
      this.buf.writeFloatBE(v, this.len);
      this.len += 4;
      return;
    }
    this.double(v);
  }

  private dynamic(v: unknown, path: string): undefined {
    if (typeof v === "string") return this.string(v);
    if (typeof v === "number") {
      if (Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff && !Object.is(v, -0)) return this.int32(v);
      return Number.isSafeInteger(v) ? this.int64(BigInt(v)) : this.double(v);
    }
    if (typeof v === "boolean") return this.byte(v ? 0xb1 : 0xb0);
    if (typeof v === "bigint") return this.int64(v);
    if (v instanceof Date) return this.date(v);
    if (v instanceof Uint8Array) return this.binary(v);
    if (Array.isArray(v)) return this.array(v, ANY, path);
    if (typeof v === "object" && v !== null) {
      const java = javaClassOf((v as object).constructor);
      if (java) return this.object(v as Record<string, unknown>, java, undefined, path);
      return this.map(v as Record<string, unknown>, ANY, path);
    }
    throw new TypeError(`cannot write a ${typeof v} in JSONB`);
  }

  private array(v: readonly unknown[], el: TypeDesc, path: string): undefined {
    if (!Array.isArray(v)) throw new TypeError("an array expected");
    if (this.ref(v, path)) return;
    if (v.length <= 15) this.byte(0x94 + v.length);
    else {
      this.byte(0xa4);
      this.int32(v.length);
    }
    for (let i = 0; i < v.length; i++) this.value(v[i], el, `${path}[${i}]`);
  }

  private map(v: Record<string, unknown> | Map<unknown, unknown>, val: TypeDesc, path: string): undefined {
    if (typeof v !== "object" || v === null) throw new TypeError("an object expected");
    if (this.ref(v, path)) return;
    this.byte(0xa6);
    const entries = v instanceof Map ? [...v] : Object.entries(v);
    for (const [k, x] of entries) {
      this.dynamic(k, path);
      this.value(x, val, `${path}.${pathName(String(k))}`);
    }
    this.byte(0xa5);
  }

  private object(v: Record<string, unknown>, java: string, fields: readonly FieldDesc[] | undefined, path: string): undefined {
    if (typeof v !== "object" || v === null) throw new TypeError(`an object (${java}) expected`);
    if (this.ref(v, path)) return;
    this.symbol(java, 0x92);
    this.byte(0xa6);
    const fs = fields ?? Object.keys(v).map((name) => ({ name, type: ANY }));
    for (const f of fs) {
      this.symbol(f.name, 0x7f);
      this.value(v[f.name], f.type, `${path}.${pathName(f.name)}`);
    }
    this.byte(0xa5);
  }
}

/** One value in JSONB, as `t` declares it (without Dubbo's length prefix). */
export function writeJsonb(v: unknown, t?: TypeDesc): Buffer {
  const w = new JsonbWriter();
  w.value(v, t);
  return w.finish();
}

/** The type names fastjson2 writes before a `Set` and the primitive arrays. */
const ARRAY_TYPES: Record<string, string> = { "java.util.Set": "HashSet", "[I": "[I", "[J": "[J", "[D": "[D", "[F": "[F", "[S": "[S", "[Z": "[Z" };

/** Characters fastjson2's `JSONWriter.Path` escapes with a backslash in a name. */
const PATH_SPECIAL = /[/:;`.~!@#%^&*[\]<>?()\-+=\\"']/g;

/** A name as a step of a reference path (`a.b` → `a\.b`), as fastjson2 writes it. */
function pathName(name: string): string {
  PATH_SPECIAL.lastIndex = 0;
  return PATH_SPECIAL.test(name) ? name.replace(PATH_SPECIAL, "\\$&") : name;
}
