// Owns `JavaValueError`, `parseDecimal`, `formatDecimal`, `checkDate`, … The text forms of Java's
// value classes that a string stands for (`T.bigDecimal`, the `java.time` helpers, `T.timestamp`,
// `T.char`, `T.enum`): parsed into their parts … Must not change: limits are checked before memory
// is spent; bad input is a 4xx naming the problem.
import type { JavaText, JavaTextType } from "../service/type-desc.js";

/**
 * The text forms of Java's value classes that a string stands for (`T.bigDecimal`, the
 * `java.time` helpers, `T.timestamp`, `T.char`, `T.enum`): parsed into their parts (what
 * hessian-lite's handles and fastjson2's JSONB carry) and written back as Java's own `toString()`
 * writes them, exactly: no float and no `Date` on the way, nanoseconds and a decimal's scale kept.
 * Parsing accepts what Java's `parse` methods accept (ISO 8601 forms); a value out of Java's range
 * (month 13, a scale past an `int`, 10^9 nanoseconds) is a {@link JavaValueError} saying why.
 */
export class JavaValueError extends Error {
  override name = "JavaValueError";
}

export interface DecimalParts {
  readonly unscaled: bigint;
  readonly scale: number;
}
export interface DateParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}
export interface TimeParts {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly nano: number;
}
export interface DateTimeParts {
  readonly date: DateParts;
  readonly time: TimeParts;
}
/** An instant or a duration: whole seconds (a Java `long`) and 0…999,999,999 nanoseconds. */
export interface SecondsParts {
  readonly seconds: bigint;
  readonly nanos: number;
}
/** An offset or zoned date-time: the local date-time, the offset in seconds, and the zone id (zoned only). */
export interface ZonedParts {
  readonly dateTime: DateTimeParts;
  readonly offset: number;
  readonly zone?: string;
}

const INT_MAX = 2147483647;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const YEAR_MAX = 999_999_999;

const bad = (what: string): never => {
  throw new JavaValueError(what);
};

// ---------- BigDecimal ----------

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,10}))?$/;

/** `new BigDecimal(text)`: the unscaled value and the scale (digits already bounded by the caller). */
export function parseDecimal(text: string): DecimalParts {
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === "" && (m[3] ?? "") === "")) return bad("not a decimal number (like 12.50, -3, 1E+3)");
  const frac = m[3] ?? "";
  const scale = frac.length - Number(m[4] ?? 0);
  if (scale > INT_MAX || scale < -INT_MAX) return bad(`its scale ${scale} is outside a Java int`);
  const digits = `${m[2]}${frac}`.replace(/^0+(?=\d)/, "");
  const unscaled = BigInt(digits || "0");
  return { unscaled: m[1] === "-" ? -unscaled : unscaled, scale };
}

/** `BigDecimal.toString()`: plain when the scale is positive and the exponent at least -6, else scientific. */
export function formatDecimal({ unscaled, scale }: DecimalParts): string {
  const sign = unscaled < 0n ? "-" : "";
  const coeff = (unscaled < 0n ? -unscaled : unscaled).toString();
  if (scale === 0) return sign + coeff;
  const adjusted = -scale + (coeff.length - 1);
  if (scale > 0 && adjusted >= -6) {
    const pad = scale - coeff.length;
    if (pad >= 0) return `${sign}0.${"0".repeat(pad)}${coeff}`;
    return `${sign}${coeff.slice(0, coeff.length - scale)}.${coeff.slice(coeff.length - scale)}`;
  }
  const mantissa = coeff.length > 1 ? `${coeff[0]}.${coeff.slice(1)}` : coeff;
  return `${sign}${mantissa}E${adjusted > 0 ? "+" : ""}${adjusted}`;
}

// ---------- dates and times ----------

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function checkDate(year: number, month: number, day: number): DateParts {
  if (!Number.isInteger(year) || Math.abs(year) > YEAR_MAX) bad(`year ${year} is outside Java's range (±999999999)`);
  if (!Number.isInteger(month) || month < 1 || month > 12) bad(`month ${month} is not 1 to 12`);
  const last = month === 2 && isLeap(year) ? 29 : DAYS[month - 1];
  if (!Number.isInteger(day) || day < 1 || day > last) bad(`day ${day} is not in ${year}-${pad(month)} (1 to ${last})`);
  return { year, month, day };
}

function checkTime(hour: number, minute: number, second: number, nano: number): TimeParts {
  if (!(hour >= 0 && hour <= 23)) bad(`hour ${hour} is not 0 to 23`);
  if (!(minute >= 0 && minute <= 59)) bad(`minute ${minute} is not 0 to 59`);
  if (!(second >= 0 && second <= 59)) bad(`second ${second} is not 0 to 59`);
  if (!(Number.isInteger(nano) && nano >= 0 && nano <= 999_999_999)) bad(`nanosecond ${nano} is not 0 to 999999999`);
  return { hour, minute, second, nano };
}

const DATE = /^([+-]\d{4,9}|\d{4})-(\d{2})-(\d{2})/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?/;
const OFFSET = /^(?:Z|([+-])(\d{2})(?::?(\d{2}))?(?::?(\d{2}))?)/;

/** Reads a date at the start of `s`: its parts and the rest. */
function takeDate(s: string): [DateParts, string] {
  const m = DATE.exec(s);
  if (!m) return bad("a date like 2024-01-31 expected");
  if (m[1].length > 4 && !/^[+-]/.test(m[1])) bad("a year past 9999 needs a sign (+10000)");
  return [checkDate(Number(m[1]), Number(m[2]), Number(m[3])), s.slice(m[0].length)];
}

function takeTime(s: string): [TimeParts, string] {
  const m = TIME.exec(s);
  if (!m) return bad("a time like 10:15:30 expected");
  const nano = m[4] ? Number(m[4].padEnd(9, "0")) : 0;
  return [checkTime(Number(m[1]), Number(m[2]), Number(m[3] ?? 0), nano), s.slice(m[0].length)];
}

function takeDateTime(s: string): [DateTimeParts, string] {
  const [date, rest] = takeDate(s);
  if (rest[0] !== "T" && rest[0] !== "t") return bad("a date-time like 2024-01-31T10:15:30 expected (T between date and time)");
  const [time, after] = takeTime(rest.slice(1));
  return [{ date, time }, after];
}

function takeOffset(s: string): [number, string] {
  const m = OFFSET.exec(s);
  if (!m) return bad("an offset like Z or +02:00 expected");
  if (!m[1]) return [0, s.slice(1)];
  const [h, mi, se] = [Number(m[2]), Number(m[3] ?? 0), Number(m[4] ?? 0)];
  if (h > 18 || mi > 59 || se > 59 || h * 3600 + mi * 60 + se > 18 * 3600) bad("an offset beyond ±18:00");
  const v = h * 3600 + mi * 60 + se;
  return [m[1] === "-" ? -v : v, s.slice(m[0].length)];
}

const end = <T>([v, rest]: [T, string], what: string): T => (rest === "" ? v : bad(`unexpected ${JSON.stringify(rest.slice(0, 20))} after the ${what}`));

const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/** `LocalDate.toString()`: four digits at least, a sign for negative years and for years past 9999. */
export function formatDate({ year, month, day }: DateParts): string {
  const y = Math.abs(year) < 1000 ? `${year < 0 ? "-" : ""}${pad(Math.abs(year), 4)}` : `${year > 9999 ? "+" : ""}${year}`;
  return `${y}-${pad(month)}-${pad(day)}`;
}

/** The fraction of a second as Java writes it: 3, 6 or 9 digits, none for 0. */
function fraction(nano: number): string {
  if (nano === 0) return "";
  if (nano % 1_000_000 === 0) return `.${pad(nano / 1_000_000, 3)}`;
  if (nano % 1000 === 0) return `.${pad(nano / 1000, 6)}`;
  return `.${pad(nano, 9)}`;
}

/** `LocalTime.toString()`: `HH:mm`, then `:ss` when seconds or nanos, then the fraction. */
export function formatTime({ hour, minute, second, nano }: TimeParts): string {
  const s = second > 0 || nano > 0 ? `:${pad(second)}${fraction(nano)}` : "";
  return `${pad(hour)}:${pad(minute)}${s}`;
}

export const formatDateTime = (v: DateTimeParts): string => `${formatDate(v.date)}T${formatTime(v.time)}`;

/** `ZoneOffset.getId()`: `Z`, `+02:00`, `-05:30:15`. */
export function formatOffset(seconds: number): string {
  if (seconds === 0) return "Z";
  const a = Math.abs(seconds);
  const s = a % 60;
  return `${seconds < 0 ? "-" : "+"}${pad(Math.floor(a / 3600))}:${pad(Math.floor(a / 60) % 60)}${s ? `:${pad(s)}` : ""}`;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function epochDay({ year, month, day }: DateParts): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The date of a day count since 1970-01-01 (civil_from_days). */
function dateOfEpochDay(days: number): DateParts {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: era * 400 + yoe + (month <= 2 ? 1 : 0), month, day };
}

/** Seconds since the epoch of a local date-time at an offset. */
export function epochSecond(v: DateTimeParts, offset = 0): bigint {
  const t = v.time;
  return BigInt(epochDay(v.date)) * 86400n + BigInt(t.hour * 3600 + t.minute * 60 + t.second - offset);
}

/** The UTC date-time of an instant. */
export function dateTimeOfInstant({ seconds, nanos }: SecondsParts): DateTimeParts {
  const days = seconds >= 0n ? seconds / 86400n : -((-seconds + 86399n) / 86400n);
  const sod = Number(seconds - days * 86400n);
  return {
    date: dateOfEpochDay(Number(days)),
    time: { hour: Math.floor(sod / 3600), minute: Math.floor(sod / 60) % 60, second: sod % 60, nano: nanos },
  };
}

/** `Instant.toString()`: UTC, seconds always written, the fraction in groups of three digits. */
export function formatInstant(v: SecondsParts): string {
  const { date, time } = dateTimeOfInstant(v);
  return `${formatDate(date)}T${pad(time.hour)}:${pad(time.minute)}:${pad(time.second)}${fraction(time.nano)}Z`;
}

function parseInstant(s: string): SecondsParts {
  const [dt, rest] = takeDateTime(s);
  const offset = end(takeOffset(rest), "offset");
  const seconds = epochSecond(dt, offset);
  if (Math.abs(dt.date.year) > 1_000_000_000 - 1) bad("outside Java's Instant range");
  return { seconds, nanos: dt.time.nano };
}

// ---------- zones ----------

const ZONE_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** A region's formatter, or undefined when the runtime's time zone data does not know it. */
function zoneFormat(zone: string): Intl.DateTimeFormat | undefined {
  let f = ZONE_FORMATS.get(zone);
  if (f) return f;
  if (ZONE_FORMATS.size > 1000) ZONE_FORMATS.clear();
  try {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      era: "short",
    });
  } catch {
    return undefined;
  }
  ZONE_FORMATS.set(zone, f);
  return f;
}

/** Java's fixed-offset zone ids: `Z`, `+02:00`, `UTC`, `GMT+2`, `UT-01:30`. */
const FIXED_ZONE = /^(?:Z|(?:UTC|GMT|UT)(?:[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)?|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)$/;

/** Checks a zone id: a fixed offset, or a region the runtime's time zone data knows. */
export function checkZone(zone: string): string {
  if (zone.length > 64 || !(FIXED_ZONE.test(zone) || (/^[A-Za-z][\w/+-]*$/.test(zone) && zoneFormat(zone)))) {
    bad(`unknown time zone ${JSON.stringify(zone.slice(0, 64))}`);
  }
  return zone;
}

/**
 * The offset in seconds of `zone` at the local date-time `dt` (earlier offset in an overlap, the
 * offset before the gap in a gap, as Java's `ZonedDateTime.ofLocal` picks), for a region; the
 * fixed offset of an offset id.
 */
export function zoneOffsetAt(zone: string, dt: DateTimeParts): number {
  const fixed = /^(?:UTC|GMT|UT)?([+-].*)?$/.exec(zone === "Z" ? "UTC" : zone);
  if (fixed) return fixed[1] ? takeOffset(fixed[1].length <= 3 ? `${fixed[1][0]}${fixed[1].slice(1).padStart(2, "0")}` : fixed[1])[0] : 0;
  const local = Number(epochSecond(dt));
  const f = zoneFormat(zone);
  if (!f) return bad(`unknown time zone ${JSON.stringify(zone)}`);
  const offsetAt = (t: number): number => {
    const p: Record<string, string> = {};
    for (const x of f.formatToParts(new Date(t * 1000))) p[x.type] = x.value;
    const y = p.era === "BC" ? 1 - Number(p.year) : Number(p.year);
    const wall = epochDay({ year: y, month: Number(p.month), day: Number(p.day) }) * 86400 + Number(p.hour) * 3600 + Number(p.minute) * 60 + Number(p.second);
    return wall - t;
  };
  // The offsets a day either side: the candidates Java chooses among.
  const before = offsetAt(local - 86400);
  const after = offsetAt(local + 86400);
  const earlier = Math.max(before, after);
  if (offsetAt(local - earlier) === earlier) return earlier;
  const later = Math.min(before, after);
  return offsetAt(local - later) === later ? later : before;
}

function parseZoned(s: string, zoned: boolean): ZonedParts {
  const [dateTime, rest] = takeDateTime(s);
  const [offset, after] = takeOffset(rest);
  if (!zoned) return { dateTime, offset: end([offset, after], "offset") };
  if (after === "") return { dateTime, offset, zone: formatOffset(offset) };
  const m = /^\[([^\]]{1,64})\]$/.exec(after);
  if (!m) return bad("a zone like [Europe/Berlin] expected after the offset");
  return { dateTime, offset, zone: checkZone(m[1]) };
}

/** `ZonedDateTime.toString()`: the local date-time, the offset, and the zone in brackets when it is not the offset. */
export function formatZoned(v: ZonedParts): string {
  const off = formatOffset(v.offset);
  return `${formatDateTime(v.dateTime)}${off}${v.zone !== undefined && v.zone !== off ? `[${v.zone}]` : ""}`;
}

// ---------- Duration ----------

const DURATION = /^([-+]?)P(?:([-+]?\d{1,16})D)?(?:T(?:([-+]?\d{1,16})H)?(?:([-+]?\d{1,16})M)?(?:([-+]?)(\d{1,19})(?:[.,](\d{0,9}))?S)?)?$/i;

/** `Duration.parse`: `PnDTnHnMn.nS`, each part signed, a sign before the whole. */
export function parseDuration(s: string): SecondsParts {
  const m = DURATION.exec(s);
  if (!m || s.endsWith("T") || s.length <= 2 || /T$/i.test(s)) return bad("a duration like PT8H6M12.345S expected");
  const part = (x: string | undefined, k: bigint) => (x ? BigInt(x) * k : 0n);
  let secs = part(m[2], 86400n) + part(m[3], 3600n) + part(m[4], 60n);
  const negS = m[5] === "-";
  const sec = m[6] ? BigInt(m[6]) : 0n;
  const frac = m[7] ? BigInt(m[7].padEnd(9, "0")) : 0n;
  let nanos = (sec * 1_000_000_000n + frac) * (negS ? -1n : 1n) + secs * 1_000_000_000n;
  if (m[1] === "-") nanos = -nanos;
  secs = nanos >= 0n ? nanos / 1_000_000_000n : -((-nanos + 999_999_999n) / 1_000_000_000n);
  if (secs < LONG_MIN || secs > LONG_MAX) bad("a duration past a Java long of seconds");
  return { seconds: secs, nanos: Number(nanos - secs * 1_000_000_000n) };
}

/** `Duration.toString()`. */
export function formatDuration({ seconds, nanos }: SecondsParts): string {
  if (seconds === 0n && nanos === 0) return "PT0S";
  const total = seconds < 0n && nanos > 0 ? seconds + 1n : seconds;
  const hours = total / 3600n;
  const minutes = (total % 3600n) / 60n;
  const secs = total % 60n;
  let out = "PT";
  if (hours !== 0n) out += `${hours}H`;
  if (minutes !== 0n) out += `${minutes}M`;
  if (secs === 0n && nanos === 0 && out.length > 2) return out;
  out += seconds < 0n && nanos > 0 && secs === 0n ? "-0" : `${secs}`;
  if (nanos > 0) {
    const digits = String(seconds < 0n ? 2_000_000_000 - nanos : nanos + 1_000_000_000)
      .slice(1)
      .replace(/0+$/, "");
    out += `.${digits}`;
  }
  return `${out}S`;
}

// ---------- the whole value ----------

export type JavaParts = DecimalParts | DateParts | TimeParts | DateTimeParts | SecondsParts | ZonedParts | string;

/** A value's text → its parts (a char or an enum: the text itself, checked). */
export function parseJavaValue(t: JavaText, text: string): JavaParts {
  switch (t.type) {
    case "decimal":
      return parseDecimal(text);
    case "localDate":
      return end(takeDate(text), "date");
    case "localTime":
      return end(takeTime(text), "time");
    case "localDateTime":
      return end(takeDateTime(text), "date-time");
    case "instant":
    case "timestamp":
      return parseInstant(text);
    case "offsetDateTime":
      return parseZoned(text, false);
    case "zonedDateTime":
      return parseZoned(text, true);
    case "duration":
      return parseDuration(text);
    case "char":
      return text.length === 1 ? text : bad(`a Java char is one UTF-16 unit, not ${text.length}`);
    case "enum":
      return t.values?.includes(text) ? text : bad(`not a constant of ${t.name} (${(t.values ?? []).join(", ")})`);
  }
}

/** What a value of the type looks like, for error messages. */
export function javaValueExample(t: JavaText): string {
  const examples: Record<JavaTextType, string> = {
    decimal: 'a decimal number as text (java.math.BigDecimal, like "12.50")',
    localDate: 'a date as text (java.time.LocalDate, like "2024-01-31")',
    localTime: 'a time as text (java.time.LocalTime, like "10:15:30")',
    localDateTime: 'a date-time as text (java.time.LocalDateTime, like "2024-01-31T10:15:30")',
    instant: 'an instant as text (java.time.Instant, like "2024-01-31T10:15:30Z")',
    offsetDateTime: 'a date-time with an offset as text (java.time.OffsetDateTime, like "2024-01-31T10:15:30+01:00")',
    zonedDateTime: 'a zoned date-time as text (java.time.ZonedDateTime, like "2024-03-31T03:30+02:00[Europe/Berlin]")',
    duration: 'a duration as text (java.time.Duration, like "PT8H6M12.345S")',
    timestamp: 'an instant as text (java.sql.Timestamp, like "2024-01-31T10:15:30.123Z")',
    char: "a string of one UTF-16 unit (a Java char)",
    enum: `one of ${(t.values ?? []).join(", ")} (the Java enum ${t.name})`,
  };
  return examples[t.type];
}
