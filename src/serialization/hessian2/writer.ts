// Owns `writeHessian`. One value in hessian2, as `t` declares it. Must not change: the bytes stay
// what Dubbo Java's hessian2 (hessian-lite) writes and reads; reads stay bounded.
import { bigIntToWords } from "../../codec/big-words.js";
import { javaClassName } from "../java-types.js";
import { javaClassOf } from "../../service/java-class.js";
import type { JavaText, TypeDesc } from "../../service/type-desc.js";
import { ByteWriter } from "../bytes.js";
import { HessianObject, hessianObject } from "./handles.js";

/**
 * A Hessian 2.0 writer, directed by our type descriptions so Java gets the classes it declared:
 * `number` as a double, or an int / long when declared `T.int32` / `T.int64`; `bigint` as a
 * long; `Date` as a date; bytes as binary; arrays as untyped lists (Java reads `ArrayList`);
 * maps as untyped maps (`HashMap`); decorated classes as objects of their `@JavaClass`, with
 * one class definition per class. An object met twice (or a cycle) is written once and then
 * referenced. Untyped values (`any`) are written by their JavaScript type: integers as int
 * (long past 32 bits), other numbers as double, plain objects as maps.
 */
const ANY: TypeDesc = { kind: "any" };

class HessianWriter extends ByteWriter {
  private readonly refs = new Map<object, number>();
  private readonly classes = new Map<string, number>();

  private u16(v: number): undefined {
    this.room(2);
    this.buf.writeUInt16BE(v, this.len);
    this.len += 2;
  }

  private i32(v: number): undefined {
    this.room(4);
    this.buf.writeInt32BE(v, this.len);
    this.len += 4;
  }

  /** Any value, as `t` declares it. */
  value(v: unknown, t: TypeDesc = ANY): undefined {
    if (v === null || v === undefined) return this.byte(0x4e);
    switch (t.kind) {
      case "string":
        return t.java ? this.javaValue(v, t.java) : this.string(String(v));
      case "number":
        return this.number(Number(v), t.proto);
      case "boolean":
        return this.byte(v ? 0x54 : 0x46);
      case "bigint":
        return t.java ? this.bigInteger(BigInt(v as bigint)) : this.long(BigInt(v as bigint));
      case "date":
        return this.date(v instanceof Date ? v : new Date(v as string));
      case "bytes":
      case "file":
      case "upload":
      case "download":
        return this.binary(v as Uint8Array);
      case "array":
        return this.list(v instanceof Set ? [...v] : (v as readonly unknown[]), t.element, t.java && LIST_TYPES[t.java]);
      case "map":
        return this.map(v as Record<string, unknown> | Map<unknown, unknown>, t.value, t.java);
      case "class":
        return this.object(v as Record<string, unknown>, javaClassName(t, true), t.fields);
      default:
        return this.dynamic(v);
    }
  }

  /** A Java value class given as its text (`T.bigDecimal`, `T.localDate`, `T.enum(…)`…): the object hessian-lite reads back into it. */
  private javaValue(v: unknown, java: JavaText): undefined {
    if (typeof v !== "string") throw new TypeError(`${java.name}: a string expected, got ${typeof v}`);
    let h: HessianObject | string;
    try {
      h = hessianObject(java, v);
    } catch (e) {
      throw new TypeError(`${java.name} ${JSON.stringify(v.slice(0, 48))}: ${(e as Error).message}`);
    }
    if (typeof h === "string") return this.string(h);
    this.handle(h);
  }

  private handle(h: HessianObject): undefined {
    this.object(h.value, h.className, h.fields);
  }

  private number(v: number, proto: string | undefined): undefined {
    if (proto === "int32" || proto === "uint32" || proto === "int64" || proto === "uint64") {
      if (!Number.isSafeInteger(v)) throw new TypeError(`${v} is not an integer`);
      if ((proto === "int32" || proto === "uint32") && v >= -0x80000000 && v <= 0x7fffffff) return this.int(v);
      return this.long(BigInt(v));
    }
    this.double(v);
  }

  private dynamic(v: unknown): undefined {
    if (typeof v === "string") return this.string(v);
    if (typeof v === "number") {
      if (Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff && !Object.is(v, -0)) return this.int(v);
      return Number.isSafeInteger(v) ? this.long(BigInt(v)) : this.double(v);
    }
    if (typeof v === "boolean") return this.byte(v ? 0x54 : 0x46);
    if (typeof v === "bigint") return this.long(v);
    if (v instanceof Date) return this.date(v);
    if (v instanceof Uint8Array) return this.binary(v);
    if (Array.isArray(v)) return this.list(v, ANY);
    if (typeof v === "object" && v !== null) {
      const java = javaClassOf((v as object).constructor);
      if (java) return this.object(v as Record<string, unknown>, java, undefined);
      return this.map(v as Record<string, unknown>, ANY);
    }
    throw new TypeError(`cannot write a ${typeof v} in hessian2`);
  }

  int(v: number): undefined {
    if (v >= -16 && v <= 47) return this.byte(0x90 + v);
    if (v >= -2048 && v <= 2047) {
      this.byte(0xc8 + (v >> 8));
      return this.byte(v & 0xff);
    }
    if (v >= -262144 && v <= 262143) {
      this.byte(0xd4 + (v >> 16));
      return this.u16(v & 0xffff);
    }
    this.byte(0x49);
    this.i32(v);
  }

  long(v: bigint): undefined {
    if (v < -(2n ** 63n) || v >= 2n ** 63n) throw new TypeError(`${v} does not fit a Java long`);
    const n = Number(v);
    if (n >= -8 && n <= 15) return this.byte(0xe0 + n);
    if (n >= -2048 && n <= 2047) {
      this.byte(0xf8 + (n >> 8));
      return this.byte(n & 0xff);
    }
    if (n >= -262144 && n <= 262143) {
      this.byte(0x3c + (n >> 16));
      return this.u16(n & 0xffff);
    }
    if (n >= -0x80000000 && n <= 0x7fffffff) {
      this.byte(0x59);
      return this.i32(n);
    }
    this.byte(0x4c);
    this.room(8);
    this.buf.writeBigInt64BE(v, this.len);
    this.len += 8;
  }

  /**
   * A `java.math.BigInteger` as Java serializes it field by field (Caucho Hessian, hessian-lite):
   * `signum` and the magnitude `mag` as big-endian 32-bit words (an `[int` list, no leading
   * zero word); its cached fields are left out (0 means "not computed").
   */
  bigInteger(v: bigint): undefined {
    const words = bigIntToWords(v);
    // Java's reader numbers the object and its list as references: keep our numbering in step.
    this.ref({});
    this.ref(words);
    const key = "java.math.BigInteger\0signum,mag";
    let def = this.classes.get(key);
    if (def === undefined) {
      def = this.classes.size;
      this.classes.set(key, def);
      this.byte(0x43);
      this.string("java.math.BigInteger");
      this.int(2);
      this.string("signum");
      this.string("mag");
    }
    if (def <= 15) this.byte(0x60 + def);
    else {
      this.byte(0x4f);
      this.int(def);
    }
    this.int(v > 0n ? 1 : v < 0n ? -1 : 0);
    // A typed list of ints, as Java writes an int[] (one more reference for the list).
    if (words.length <= 7) this.byte(0x70 + words.length);
    else this.byte(0x56);
    this.string("[int");
    if (words.length > 7) this.int(words.length);
    for (const w of words) this.int(w);
  }

  double(v: number): undefined {
    if (Number.isInteger(v) && !Object.is(v, -0)) {
      if (v === 0) return this.byte(0x5b);
      if (v === 1) return this.byte(0x5c);
      if (v >= -128 && v <= 127) {
        this.byte(0x5d);
        return this.byte(v & 0xff);
      }
      if (v >= -32768 && v <= 32767) {
        this.byte(0x5e);
        return this.u16(v & 0xffff);
      }
    }
    this.byte(0x44);
    this.room(8);
    this.buf.writeDoubleBE(v, this.len);
    this.len += 8;
  }

  date(d: Date): undefined {
    const ms = d.getTime();
    if (Number.isNaN(ms)) throw new TypeError("an invalid Date");
    this.byte(0x4a);
    this.room(8);
    this.buf.writeBigInt64BE(BigInt(ms), this.len);
    this.len += 8;
  }

  /** A string in chunks of at most 32768 UTF-16 units, each unit in UTF-8 (surrogates one by one, as Java writes and reads them). */
  string(s: string): undefined {
    let i = 0;
    while (s.length - i > 0x8000) {
      this.byte(0x52);
      this.u16(0x8000);
      this.chars(s, i, i + 0x8000);
      i += 0x8000;
    }
    const n = s.length - i;
    if (n <= 31) this.byte(n);
    else if (n <= 1023) {
      this.byte(0x30 + (n >> 8));
      this.byte(n & 0xff);
    } else {
      this.byte(0x53);
      this.u16(n);
    }
    this.chars(s, i, s.length);
  }

  private chars(s: string, from: number, to: number): undefined {
    this.room((to - from) * 3);
    const b = this.buf;
    let p = this.len;
    for (let i = from; i < to; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) b[p++] = c;
      else if (c < 0x800) {
        b[p++] = 0xc0 | (c >> 6);
        b[p++] = 0x80 | (c & 0x3f);
      } else {
        b[p++] = 0xe0 | (c >> 12);
        b[p++] = 0x80 | ((c >> 6) & 0x3f);
        b[p++] = 0x80 | (c & 0x3f);
      }
    }
    this.len = p;
  }

  binary(v: Uint8Array): undefined {
    let i = 0;
    while (v.length - i > 0x8000) {
      this.byte(0x41);
      this.u16(0x8000);
      this.raw(v.subarray(i, i + 0x8000));
      i += 0x8000;
    }
    const n = v.length - i;
    if (n <= 15) this.byte(0x20 + n);
    else if (n <= 1023) {
      this.byte(0x34 + (n >> 8));
      this.byte(n & 0xff);
    } else {
      this.byte(0x42);
      this.u16(n);
    }
    this.raw(v.subarray(i));
  }

  /** True (and the reference written) when `o` was written before. */
  private ref(o: object): boolean {
    const i = this.refs.get(o);
    if (i === undefined) {
      this.refs.set(o, this.refs.size);
      return false;
    }
    this.byte(0x51);
    this.int(i);
    return true;
  }

  /** A list: untyped (Java reads an `ArrayList`), or typed (`java.util.HashSet`, `[int` for an `int[]` …). */
  private list(v: readonly unknown[], el: TypeDesc, type?: string): undefined {
    if (!Array.isArray(v)) throw new TypeError("an array expected");
    if (this.ref(v)) return;
    if (type !== undefined) {
      if (v.length <= 7) this.byte(0x70 + v.length);
      else this.byte(0x56);
      this.string(type);
      if (v.length > 7) this.int(v.length);
    } else if (v.length <= 7) this.byte(0x78 + v.length);
    else {
      this.byte(0x58);
      this.int(v.length);
    }
    for (const x of v) this.value(x, el);
  }

  /** A map: untyped (Java reads a `HashMap`), or typed with its class (`java.util.TreeMap`). */
  private map(v: Record<string, unknown> | Map<unknown, unknown>, val: TypeDesc, type?: string): undefined {
    if (typeof v !== "object" || v === null) throw new TypeError("an object expected");
    if (this.ref(v)) return;
    if (type !== undefined) {
      this.byte(0x4d);
      this.string(type);
    } else this.byte(0x48);
    const entries = v instanceof Map ? [...v] : Object.entries(v);
    for (const [k, x] of entries) {
      this.dynamic(k);
      this.value(x, val);
    }
    this.byte(0x5a);
  }

  private object(v: Record<string, unknown>, java: string, fields: readonly { name: string; type: TypeDesc }[] | undefined): undefined {
    if (typeof v !== "object" || v === null) throw new TypeError(`an object (${java}) expected`);
    if (this.ref(v)) return;
    const fs = fields ?? Object.keys(v).map((name) => ({ name, type: ANY }));
    const key = `${java}\0${fs.map((f) => f.name).join(",")}`;
    let def = this.classes.get(key);
    if (def === undefined) {
      def = this.classes.size;
      this.classes.set(key, def);
      this.byte(0x43);
      this.string(java);
      this.int(fs.length);
      for (const f of fs) this.string(f.name);
    }
    if (def <= 15) this.byte(0x60 + def);
    else {
      this.byte(0x4f);
      this.int(def);
    }
    for (const f of fs) {
      const x = v[f.name];
      if (x instanceof HessianObject) this.handle(x);
      else this.value(x, f.type);
    }
  }
}

/** The list types hessian-lite writes for Java's collections and primitive arrays. */
const LIST_TYPES: Record<string, string> = {
  "java.util.Set": "java.util.HashSet",
  "[I": "[int",
  "[J": "[long",
  "[D": "[double",
  "[F": "[float",
  "[S": "[short",
  "[Z": "[boolean",
};

/** One value in hessian2, as `t` declares it. */
export function writeHessian(v: unknown, t?: TypeDesc): Buffer {
  const w = new HessianWriter();
  w.value(v, t);
  return w.finish();
}
