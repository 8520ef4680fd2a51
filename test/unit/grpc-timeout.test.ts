import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Code } from "../../src/protocol/code.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import { formatGrpcTimeout, parseGrpcTimeout } from "../../src/protocol-grpc/wire.js";

/** Milliseconds per unit, as gRPC's HTTP/2 protocol defines them. */
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

function assertInvalid(value: string): void {
  assert.throws(
    () => parseGrpcTimeout(value),
    (e: unknown) => {
      assert.ok(e instanceof RpcError, `"${value}" should throw an RpcError, got ${String(e)}`);
      assert.equal(e.code, Code.InvalidArgument, `"${value}"`);
      assert.match(e.message, /grpc-timeout/);
      return true;
    },
    `"${value}" should be refused`,
  );
}

/** The unit letter and digit string of a formatted value. */
function split(v: string): { digits: string; unit: string } {
  return { digits: v.slice(0, -1), unit: v.slice(-1) };
}

describe("parseGrpcTimeout", () => {
  it("absent or empty is undefined", () => {
    assert.equal(parseGrpcTimeout(undefined), undefined);
    assert.equal(parseGrpcTimeout(""), undefined);
  });

  it("each unit H M S m u n converts to milliseconds", () => {
    assert.equal(parseGrpcTimeout("2H"), 7_200_000);
    assert.equal(parseGrpcTimeout("3M"), 180_000);
    assert.equal(parseGrpcTimeout("4S"), 4000);
    assert.equal(parseGrpcTimeout("5m"), 5);
    assert.equal(parseGrpcTimeout("0m"), 0);
    assert.ok(Math.abs(parseGrpcTimeout("1500u")! - 1.5) < 1e-12);
    assert.ok(Math.abs(parseGrpcTimeout("2000000n")! - 2) < 1e-12);
  });

  it("at most 8 digits: 8 parse, 9 are invalid_argument", () => {
    assert.equal(parseGrpcTimeout("99999999m"), 99_999_999);
    assert.equal(parseGrpcTimeout("00000001S"), 1000);
    assertInvalid("123456789m");
    assertInvalid("000000001S");
  });

  it("malformed values are RpcError invalid_argument naming the header", () => {
    for (const v of ["1", "m", "S", "1x", "1h", "1s", "1.5S", "-1S", "+1S", " 1S", "1S ", "1 S", "1SS", "1e3m", "0x10m", "１S", "1٣S"]) {
      assertInvalid(v);
    }
  });

  it("property: every 1-8 digit value with a unit parses to digits × unit", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{1,8}$/), fc.constantFrom(...Object.keys(UNIT_MS)), (digits, unit) => {
        const ms = parseGrpcTimeout(digits + unit)!;
        const want = Number(digits) * UNIT_MS[unit];
        assert.ok(Math.abs(ms - want) <= want * 1e-12, `${digits}${unit} → ${ms}, want ${want}`);
      }),
    );
  });
});

describe("formatGrpcTimeout", () => {
  it("non-positive durations become the smallest timeout, 1n", () => {
    assert.equal(formatGrpcTimeout(0), "1n");
    assert.equal(formatGrpcTimeout(-5), "1n");
  });

  it("finest unit that fits 8 digits: u under 100 s, then m, then S, then M", () => {
    assert.equal(formatGrpcTimeout(1), "1000u");
    assert.equal(formatGrpcTimeout(2999), "2999000u");
    assert.equal(formatGrpcTimeout(0.0004), "1u"); // rounds up, never down to 0
    assert.equal(formatGrpcTimeout(99_999), "99999000u");
    assert.equal(formatGrpcTimeout(100_000), "100000m");
    assert.equal(formatGrpcTimeout(99_999_999), "99999999m");
    assert.equal(formatGrpcTimeout(100_000_000), "100000S");
    assert.equal(formatGrpcTimeout(100_000_000_000), "1666667M");
  });

  it("durations too long for 8 digits of minutes are capped at 99999999M", () => {
    assert.equal(formatGrpcTimeout(1e16), "99999999M");
  });

  it("property: integer ms round trip — parse(format(ms)) >= ms, within one unit, at most 8 digits", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99_999_999_000 }), (ms) => {
        const v = formatGrpcTimeout(ms);
        const { digits, unit } = split(v);
        assert.match(digits, /^\d{1,8}$/, `format(${ms}) = ${v}`);
        const back = parseGrpcTimeout(v)!;
        assert.ok(back >= ms, `parse(format(${ms})) = ${back} < ${ms}`);
        assert.ok(back - ms < UNIT_MS[unit], `parse(format(${ms})) = ${back}: more than one ${unit} above`);
      }),
    );
  });

  it("property: fractional ms round trip under 100 s rounds up to the next microsecond", () => {
    fc.assert(
      fc.property(fc.double({ min: 0.000001, max: 99_999.99, noNaN: true }), (ms) => {
        const v = formatGrpcTimeout(ms);
        const back = parseGrpcTimeout(v)!;
        // A nanosecond of slack for the float products on both sides.
        assert.ok(back >= ms - 1e-6, `parse(format(${ms})) = ${back} < ${ms}`);
        assert.ok(back - ms < 0.001 + 1e-6, `parse(format(${ms})) = ${back}`);
      }),
    );
  });

  it("every output parses: at most 8 digits right below each unit switch", () => {
    for (const ms of [99_999.9995, 99_999_999.5, 99_999_999_001, 99_999_999_999]) {
      const v = formatGrpcTimeout(ms);
      assert.match(v, /^\d{1,8}[HMSmun]$/, `format(${ms}) = ${v}`);
      assert.ok(parseGrpcTimeout(v)! >= ms);
    }
  });
});
