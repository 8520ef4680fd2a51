// Owns `javaTextOf`. A decoded Java value where a Java value class is declared (`T.bigDecimal`, the
// `java.time` helpers, `T.timestamp`, `T.char`, `T.enum(…)`) → its text as Java's `toString()`
// writes it. Must not change: gRPC's wire rules (5-byte message prefix, grpc-status in trailers)
// that grpc-js and other peers rely on.
import { countDigits, numberDigitsLimit } from "../codec/big-numbers.js";
import {
  checkDate,
  type DateParts,
  type DateTimeParts,
  epochSecond,
  dateTimeOfInstant,
  formatDate,
  formatDateTime,
  formatDecimal,
  formatDuration,
  formatInstant,
  formatOffset,
  formatTime,
  formatZoned,
  JavaValueError,
  parseDecimal,
  parseJavaValue,
  type SecondsParts,
  type ZonedParts,
} from "../codec/java-values.js";
import { JAVA_CLASS } from "../serialization/hessian2/reader.js";
import { JAVA_TIME } from "../serialization/jsonb/reader.js";
import type { JavaText } from "../service/type-desc.js";

/**
 * A decoded Java value where a Java value class is declared (`T.bigDecimal`, the `java.time`
 * helpers, `T.timestamp`, `T.char`, `T.enum(…)`) → its text as Java's `toString()` writes it.
 * hessian2 gives hessian-lite's objects (a `BigDecimal` { value }, the `java.time` handles, a
 * `Timestamp` { value: Date }, an enum { name }); JSONB gives a `BigDecimal` object too, local
 * dates and times as text, instants and zoned date-times as a `Date` with their exact parts under
 * `JAVA_TIME`. Anything else is returned as it is, for the converter to refuse, naming the value.
 */
export function javaTextOf(v: unknown, java: JavaText): unknown {
  try {
    if (typeof v === "string") return fromText(v, java);
    // fastjson2 writes an enum field by its ordinal: the constant at that place of the declared list.
    if (java.type === "enum" && typeof v === "number") return java.values?.[v] ?? v;
    if (typeof v === "number" || typeof v === "bigint") return java.type === "decimal" && (typeof v === "bigint" || Number.isSafeInteger(v)) ? String(v) : v;
    if (v instanceof Date) return fromDate(v, java);
    if (typeof v === "object" && v !== null) return fromObject(v as Record<string | symbol, unknown>, java);
  } catch (e) {
    if (!(e instanceof JavaValueError)) throw e;
  }
  return v;
}

/** JSONB's local text (`2024-01-02T03:04:05.000`) in Java's form; a local date-time for a Timestamp is UTC. */
function fromText(v: string, java: JavaText): string {
  switch (java.type) {
    case "localDate":
    case "localTime":
    case "localDateTime":
      return formatAs(java, v);
    case "timestamp":
      return /^[+-]?\d{4,9}-\d\d-\d\dT[\d:.]+$/.test(v) ? formatAs(java, `${v}Z`) : v;
    default:
      return v;
  }
}

function formatAs(java: JavaText, text: string): string {
  const parts = parseJavaValue(java, text);
  switch (java.type) {
    case "localDate":
      return formatDate(parts as never);
    case "localTime":
      return formatTime(parts as never);
    case "localDateTime":
      return formatDateTime(parts as never);
    default:
      return formatInstant(parts as SecondsParts);
  }
}

/** A JSONB instant or zoned date-time (exact parts under JAVA_TIME), or a plain `Date` (ms). */
function fromDate(d: Date, java: JavaText): unknown {
  const parts = (d as unknown as Record<symbol, unknown>)[JAVA_TIME] as Partial<SecondsParts & ZonedParts> | undefined;
  const ms = BigInt(d.getTime());
  const instant: SecondsParts =
    parts?.seconds !== undefined
      ? (parts as SecondsParts)
      : { seconds: ms >= 0n ? ms / 1000n : -((-ms + 999n) / 1000n), nanos: Number(((ms % 1000n) + 1000n) % 1000n) * 1e6 };
  switch (java.type) {
    case "instant":
    case "timestamp":
      if (parts?.dateTime) return formatInstant(secondsOf(parts as ZonedParts));
      return formatInstant(instant);
    case "offsetDateTime":
    case "zonedDateTime": {
      const z = parts?.dateTime ? (parts as ZonedParts) : { dateTime: dateTimeOfInstant(instant), offset: 0, zone: "Z" };
      return java.type === "zonedDateTime" ? formatZoned(z) : `${formatDateTime(z.dateTime)}${formatOffset(z.offset)}`;
    }
    default:
      return d;
  }
}

const secondsOf = (z: ZonedParts): SecondsParts => ({ seconds: epochSecond(z.dateTime, z.offset), nanos: z.dateTime.time.nano });

const int = (x: unknown): x is number => Number.isSafeInteger(x);
const JAVA8 = /\.hessian\.[\w.]*\.(\w+Handle)$/;

/** hessian-lite's objects (and JSONB's `BigDecimal`) → Java's text of the value. */
function fromObject(o: Record<string | symbol, unknown>, java: JavaText): unknown {
  const cls = o[JAVA_CLASS];
  if (typeof cls !== "string") return o;
  if (cls === "java.math.BigDecimal" && typeof o.value === "string") return decimalText(o.value);
  if (java.type === "enum" && typeof o.name === "string") return o.name;
  if (cls === "java.sql.Timestamp" && o.value instanceof Date) return fromDate(o.value, java);
  const handle = JAVA8.exec(cls)?.[1];
  switch (handle) {
    case "LocalDateHandle":
      return formatDate(dateOf(o));
    case "LocalTimeHandle":
      return formatTime(timeOf(o));
    case "LocalDateTimeHandle":
      return formatDateTime(dateTimeOf(o));
    case "InstantHandle":
    case "DurationHandle": {
      const s = { seconds: BigInt(o.seconds as number | bigint), nanos: o.nanos as number };
      if (!int(s.nanos) || s.nanos < 0 || s.nanos > 999_999_999) throw new JavaValueError("nanos out of range");
      return handle === "InstantHandle" || java.type !== "duration" ? formatInstant(s) : formatDuration(s);
    }
    case "OffsetDateTimeHandle":
    case "ZonedDateTimeHandle": {
      const z: ZonedParts = { dateTime: dateTimeOf(o.dateTime), offset: offsetOf(o.offset), zone: typeof o.zoneId === "string" ? o.zoneId : undefined };
      if (java.type === "instant" || java.type === "timestamp") return formatInstant(secondsOf(z));
      return java.type === "zonedDateTime" ? formatZoned(z) : `${formatDateTime(z.dateTime)}${formatOffset(z.offset)}`;
    }
  }
  return o;
}

/** A decimal's text in Java's form, its digits checked against `limits.maxNumberDigits` first. */
function decimalText(text: string): string {
  const max = numberDigitsLimit();
  if (text.length > max && countDigits(text) > max) {
    throw new JavaValueError(`a java.math.BigDecimal of ${countDigits(text)} digits is larger than this server takes (limits.maxNumberDigits: ${max} digits)`);
  }
  return formatDecimal(parseDecimal(text));
}

const fields = (x: unknown): Record<string, unknown> => {
  if (typeof x !== "object" || x === null) throw new JavaValueError("a java.time handle without its fields");
  return x as Record<string, unknown>;
};

function dateOf(x: unknown): DateParts {
  const o = fields(x);
  if (!int(o.year) || !int(o.month) || !int(o.day)) throw new JavaValueError("a LocalDate handle without its fields");
  return checkDate(o.year, o.month, o.day);
}

function timeOf(x: unknown) {
  const o = fields(x);
  if (!int(o.hour) || !int(o.minute) || !int(o.second) || !int(o.nano)) throw new JavaValueError("a LocalTime handle without its fields");
  if (o.nano < 0 || o.nano > 999_999_999 || o.hour < 0 || o.hour > 23 || o.minute < 0 || o.minute > 59 || o.second < 0 || o.second > 59) {
    throw new JavaValueError("a LocalTime out of range");
  }
  return { hour: o.hour, minute: o.minute, second: o.second, nano: o.nano };
}

function dateTimeOf(x: unknown): DateTimeParts {
  const o = fields(x);
  return { date: dateOf(o.date), time: timeOf(o.time) };
}

function offsetOf(x: unknown): number {
  const s = fields(x).seconds;
  if (!int(s) || Math.abs(s) > 18 * 3600) throw new JavaValueError("a ZoneOffset handle out of range");
  return s;
}
