import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { compileConverter } from "../../src/codec/binder.js";
import { formatDecimal, formatDuration, parseDecimal, parseDuration, parseJavaValue } from "../../src/codec/java-values.js";
import { fillDefaults } from "../../src/message/java-serialization.js";
import { readHessian } from "../../src/serialization/hessian2/reader.js";
import { writeHessian } from "../../src/serialization/hessian2/writer.js";
import { readJsonb, writeJsonb } from "../../src/serialization/jsonb/index.js";
import { T, type TypeDesc } from "../../src/index.js";

/**
 * The Java value classes without a JVM: Java's toString forms, our writers read back by our
 * readers (the real Java is in dubbo-types.test.ts), and bad values refused with a message.
 */
const COLOR = T.enum("org.example.Color", ["RED", "GREEN"]);

const CASES: [TypeDesc, string][] = [
  [T.bigDecimal, "-12345678901234567890.12345678901234567890"],
  [T.bigDecimal, "1E+3"],
  [T.bigDecimal, "0.00"],
  [T.bigDecimal, "1E-7"],
  [T.bigDecimal, "99999999999999999999"],
  [T.localDate, "1969-12-31"],
  [T.localDate, "2104-02-29"],
  [T.localTime, "10:15:30.123456789"],
  [T.localTime, "00:00"],
  [T.localDateTime, "2101-01-02T03:04:05.000000006"],
  [T.instant, "1969-12-31T23:59:59.000000005Z"],
  [T.instant, "1900-01-01T00:00:00.123Z"],
  [T.offsetDateTime, "2024-03-31T02:30:00.000000001+02:00"],
  [T.offsetDateTime, "2024-03-31T02:30-05:30"],
  [T.zonedDateTime, "2024-03-31T03:30+02:00[Europe/Berlin]"],
  [T.zonedDateTime, "2024-03-31T01:30Z"],
  [T.duration, "PT-4.9999997S"],
  [T.duration, "PT8H6M12.345S"],
  [T.duration, "PT0S"],
  [T.timestamp, "1900-01-01T00:00:00.123Z"],
  [T.char, "é"],
  [COLOR, "GREEN"],
];

describe("Java value classes (no JVM)", () => {
  it("Java's toString forms: BigDecimal (scale kept, exponents as Java writes them), Duration", () => {
    assert.deepEqual(parseDecimal("1.10"), { unscaled: 110n, scale: 2 });
    assert.equal(formatDecimal(parseDecimal("1e3")), "1E+3");
    assert.equal(formatDecimal(parseDecimal("+.5")), "0.5");
    assert.equal(formatDecimal(parseDecimal("-0.000001")), "-0.000001");
    assert.equal(formatDecimal(parseDecimal("0.0000001")), "1E-7");
    assert.equal(formatDecimal(parseDecimal("0E+3")), "0E+3");
    assert.equal(formatDuration(parseDuration("-PT1H")), "PT-1H");
    assert.equal(formatDuration(parseDuration("P2DT0.5S")), "PT48H0.5S");
    assert.equal(formatDuration(parseDuration("PT-0.5S")), "PT-0.5S");
  });

  for (const ser of ["hessian2", "fastjson2"] as const) {
    it(`${ser}: each value written as its Java class reads back as the same text`, () => {
      for (const [t, v] of CASES) {
        const bytes = ser === "hessian2" ? writeHessian(v, t) : writeJsonb(v, t);
        const read = ser === "hessian2" ? readHessian(bytes) : readJsonb(bytes);
        // fastjson2 writes a zone id alone: "Z" stays an offset.
        assert.equal(fillDefaults(read, t), v, `${(t as { java: { name: string } }).java.name} ${v}`);
      }
      const sets = T.set(String);
      assert.deepEqual(fillDefaults(ser === "hessian2" ? readHessian(writeHessian(new Set(["a"]), sets)) : readJsonb(writeJsonb(new Set(["a"]), sets)), sets), [
        "a",
      ]);
    });
  }

  it("bad values: invalid_argument naming the parameter and what is wrong", () => {
    const bad: [TypeDesc, unknown, RegExp][] = [
      [T.bigDecimal, "1.2.3", /decimal number/],
      [T.bigDecimal, "1E+9999999999", /Java int/],
      [T.bigDecimal, "9".repeat(5000), /limits\.maxNumberDigits/],
      [T.bigDecimal, 1.5, /decimal number as text/],
      [T.localDate, "2024-13-01", /month 13/],
      [T.localDate, "2023-02-29", /day 29/],
      [T.localTime, "24:00", /hour 24/],
      [T.localTime, "10:00:00.1234567891", /unexpected/],
      [T.instant, "2024-01-01T00:00:00", /offset/],
      [T.offsetDateTime, "2024-01-01T00:00+19:00", /18:00/],
      [T.zonedDateTime, "2024-01-01T00:00+01:00[Mars/Olympus]", /unknown time zone/],
      [T.duration, "PT", /duration/],
      [T.char, "ab", /one UTF-16 unit/],
      [COLOR, "PURPLE", /RED, GREEN/],
      [T.short, 40000, /Java short/],
      [T.byte, -129, /Java byte/],
    ];
    for (const [t, v, re] of bad) {
      assert.throws(
        () => compileConverter(t)(v, "parameter #1 (x)"),
        (e: Error) => /^parameter #1 \(x\)/.test(e.message) && re.test(e.message),
        `${String(v).slice(0, 20)}`,
      );
    }
    assert.throws(() => writeHessian("2024-02-30", T.localDate), /day 30/);
    assert.throws(() => writeJsonb("+40000-01-01", T.localDate), /16 bits/);
    assert.throws(() => parseJavaValue({ type: "localTime", name: "java.time.LocalTime" }, "10:61"), /minute 61/);
  });

  it("malformed Java bytes: huge nanos or a month 13 from Java are refused when bound, never a crash", () => {
    const h = (y: number, mo: number, d: number) => {
      const v = readHessian(writeHessian("2024-01-01", T.localDate)) as Record<string, number>;
      Object.assign(v, { year: y, month: mo, day: d });
      return v;
    };
    const conv = compileConverter(T.localDate);
    assert.throws(() => conv(fillDefaults(h(2024, 13, 1), T.localDate), "field date"), /field date must be a date/);
    const time = Buffer.from([0xa7, 10, 15, 30, 0x48, 0x7f, 0xff, 0xff, 0xff]);
    assert.throws(() => readJsonb(time), /out of range/);
  });
});
