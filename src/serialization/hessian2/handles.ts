// Owns `HessianObject`, `hessianObject`. The objects hessian-lite writes for Java's value classes,
// which its reader turns back into them: `java.math.BigDecimal` { value: its text },
// `java.sql.Timestamp` { … Must not change: the bytes stay what Dubbo Java's hessian2
// (hessian-lite) writes and reads; reads stay bounded.
import {
  type DateTimeParts,
  type DecimalParts,
  type DateParts,
  formatDecimal,
  parseJavaValue,
  type SecondsParts,
  type TimeParts,
  type ZonedParts,
} from "../../codec/java-values.js";
import type { FieldDesc, JavaText, TypeDesc } from "../../service/type-desc.js";

/**
 * The objects hessian-lite writes for Java's value classes, which its reader turns back into them:
 * `java.math.BigDecimal` { value: its text }, `java.sql.Timestamp` { value: a date in ms }, an enum
 * { name }, and the `java.time` handles of `com.alibaba.com.caucho.hessian.io.java8` (checked
 * against hessian-lite 4.0.3's classes: `LocalDateHandle` { year, month, day }, `LocalTimeHandle`
 * { hour, minute, second, nano }, `LocalDateTimeHandle` { date, time }, `InstantHandle` and
 * `DurationHandle` { seconds, nanos }, `ZoneOffsetHandle` { seconds }, `OffsetDateTimeHandle`
 * { dateTime, offset }, `ZonedDateTimeHandle` { dateTime, offset, zoneId }).
 */
export class HessianObject {
  constructor(
    readonly className: string,
    readonly fields: readonly FieldDesc[],
    /** The field values; a nested handle is a {@link HessianObject} (its field's type is `any`). */
    readonly value: Record<string, unknown>,
  ) {}
}

const JAVA8 = "com.alibaba.com.caucho.hessian.io.java8.";
const field = (name: string, type: TypeDesc): FieldDesc => ({ name, type, optional: true, tag: undefined, constraints: undefined });
const INT: TypeDesc = { kind: "number", proto: "int32" };
const LONG: TypeDesc = { kind: "bigint" };
const STRING: TypeDesc = { kind: "string" };

const ANY: TypeDesc = { kind: "any" };
const obj = (className: string, fields: FieldDesc[], value: Record<string, unknown>): HessianObject => new HessianObject(className, fields, value);
const ints = (names: string[]) => names.map((n) => field(n, INT));

function date(d: DateParts): HessianObject {
  return obj(`${JAVA8}LocalDateHandle`, ints(["year", "month", "day"]), { ...d });
}
function time(t: TimeParts): HessianObject {
  return obj(`${JAVA8}LocalTimeHandle`, ints(["hour", "minute", "second", "nano"]), { ...t });
}

function dateTime(v: DateTimeParts): HessianObject {
  return obj(`${JAVA8}LocalDateTimeHandle`, [field("date", ANY), field("time", ANY)], { date: date(v.date), time: time(v.time) });
}

function zoned(v: ZonedParts, zonedClass: boolean): HessianObject {
  const dt = dateTime(v.dateTime);
  const offset = obj(`${JAVA8}ZoneOffsetHandle`, ints(["seconds"]), { seconds: v.offset });
  if (!zonedClass) return obj(`${JAVA8}OffsetDateTimeHandle`, [field("dateTime", ANY), field("offset", ANY)], { dateTime: dt, offset });
  return obj(`${JAVA8}ZonedDateTimeHandle`, [field("dateTime", ANY), field("offset", ANY), field("zoneId", STRING)], {
    dateTime: dt,
    offset,
    zoneId: v.zone,
  });
}

/** The hessian-lite object of a Java value given as its text (`text` parsed here: a bad one throws). */
export function hessianObject(java: JavaText, text: string): HessianObject | string {
  const v = parseJavaValue(java, text);
  switch (java.type) {
    case "decimal":
      return obj("java.math.BigDecimal", [field("value", STRING)], { value: formatDecimal(v as DecimalParts) });
    case "enum":
      return obj(java.name, [field("name", STRING)], { name: v });
    case "char":
      return v as string;
    case "localDate":
      return date(v as DateParts);
    case "localTime":
      return time(v as TimeParts);
    case "localDateTime":
      return dateTime(v as DateTimeParts);
    case "instant":
    case "duration": {
      const s = v as SecondsParts;
      return obj(`${JAVA8}${java.type === "instant" ? "InstantHandle" : "DurationHandle"}`, [field("seconds", LONG), field("nanos", INT)], { ...s });
    }
    case "offsetDateTime":
    case "zonedDateTime":
      return zoned(v as ZonedParts, java.type === "zonedDateTime");
    case "timestamp": {
      const s = v as SecondsParts;
      const ms = Number(s.seconds) * 1000 + Math.floor(s.nanos / 1e6);
      return obj("java.sql.Timestamp", [field("value", { kind: "date" })], { value: new Date(ms) });
    }
  }
}
