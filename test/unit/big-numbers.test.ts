import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bitLength, checkDigits, describeBigInt, numberDigitsLimit, withNumberLimits } from "../../src/codec/big-numbers.js";
import { bigIntFromWords, bigIntToBytes, bigIntToWords, wordsBitLength } from "../../src/codec/big-words.js";
import { T } from "../../src/index.js";
import { fillDefaults } from "../../src/message/java-serialization.js";
import { readHessian } from "../../src/serialization/hessian2/reader.js";
import { writeHessian } from "../../src/serialization/hessian2/writer.js";
import { readJsonb, writeJsonb } from "../../src/serialization/jsonb/index.js";
import { assertWithin } from "../helpers/timing.js";

/** Java's `BigInteger.toByteArray()`, the slow way (one byte per shift), to check the linear one against. */
function toByteArraySlow(v: bigint): Buffer {
  const n = Math.floor((v < 0n ? -v - 1n : v).toString(2).length / 8) + 1;
  let x = v < 0n ? (1n << BigInt(8 * n)) + v : v;
  const out = Buffer.alloc(n);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}

/** The 32-bit words of |v|, a shift per word: quadratic, the writers' old form (a baseline to time against). */
function wordsByShifting(v: bigint): number[] {
  const words: number[] = [];
  for (let x = v < 0n ? -v : v; x > 0n; x >>= 32n) words.push(Number(x & 0xffffffffn));
  return words;
}

const SAMPLES = [
  0n,
  1n,
  -1n,
  127n,
  128n,
  -128n,
  -129n,
  255n,
  256n,
  2n ** 31n,
  -(2n ** 31n),
  2n ** 32n - 1n,
  2n ** 32n,
  2n ** 63n,
  -(2n ** 63n),
  2n ** 64n,
  -(2n ** 64n) + 7n,
  3n ** 200n,
  -(7n ** 333n),
];

/**
 * Times `big` once and `small` ten times (the same amount of data), three rounds alternated, and
 * keeps each one's fastest: linear work gives about the same figures, quadratic work ten times more for `big`.
 */
function linearity(big: () => unknown, small: () => unknown): { big: number; small: number } {
  const time = (f: () => unknown, n: number) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) f();
    return performance.now() - t0;
  };
  const out = { big: Infinity, small: Infinity };
  for (let round = 0; round < 3; round++) {
    out.big = Math.min(out.big, time(big, 1));
    out.small = Math.min(out.small, time(small, 10));
  }
  return out;
}

describe("big numbers in linear time (issue 33, break 1)", () => {
  it("words ↔ bigint and bytes: the same values as the shift-per-word forms, both signs", () => {
    for (const v of SAMPLES) {
      const words = bigIntToWords(v);
      assert.equal(bigIntFromWords(words, v < 0n), v, String(v));
      assert.notEqual(words[0], 0, `${v}: no leading zero word`);
      let slow = 0n;
      for (const w of words) slow = (slow << 32n) | BigInt(w >>> 0);
      assert.equal(v < 0n ? -slow : slow, v);
      assert.deepEqual(bigIntToBytes(v), toByteArraySlow(v), String(v));
    }
    assert.equal(bigIntFromWords([0, 0, 5], false), 5n, "leading zero words are harmless");
  });

  it("bit lengths: of a bigint, and of words with leading zero words skipped", () => {
    for (const v of SAMPLES.filter((x) => x >= 0n)) assert.equal(bitLength(v), v === 0n ? 0 : v.toString(2).length, String(v));
    assert.equal(wordsBitLength([0, 0, 1]), 1);
    assert.equal(wordsBitLength([-1, 0]), 64);
    assert.equal(wordsBitLength([0x7f, ...new Array(425).fill(-1)]), 13607);
    assert.equal(wordsBitLength([]), 0);
  });

  it("a million bits: words and bytes both ways in linear time (the shift-per-word forms were quadratic: seconds)", () => {
    const roundTrip = (bits: bigint) => {
      const v = (1n << bits) - 12345n;
      assert.equal(bigIntFromWords(bigIntToWords(v), false), v);
      return bigIntToBytes(v).length;
    };
    assert.equal(roundTrip(1_000_000n), 125_001);
    // The same bits as ten values of a tenth the size, timed in this test: linear work costs the
    // same either way, quadratic work ten times more for the one big value.
    const { big, small } = linearity(
      () => roundTrip(1_000_000n),
      () => roundTrip(100_000n),
    );
    assert.ok(big < 4 * small, `${big.toFixed(1)} ms for a million bits, ${small.toFixed(1)} ms for ten times 100,000`);
  });

  it("the Java writers: a BigInteger of a million bits is written in linear time and reads back (under a raised limit)", async () => {
    const v = -((1n << 1_000_000n) - 987654321n);
    const h = writeHessian(v, T.bigInteger);
    const j = writeJsonb(v, T.bigInteger);
    // Both writers together, timed against one pass of the quadratic form (a shift per 32-bit
    // word) over the same value, back to back: 12-70 ms against ~300 ms here. Before, the writers
    // shifted per word themselves: 0.6 s (hessian2) and 1.0 s (JSONB) quiet, 5x that baseline.
    await assertWithin(
      1,
      "hessian2 and JSONB writers against a shift per word",
      () => [writeHessian(v, T.bigInteger), writeJsonb(v, T.bigInteger)],
      () => wordsByShifting(v),
      2,
    );
    withNumberLimits({ maxNumberDigits: 400_000 }, () => {
      assert.equal(fillDefaults(readHessian(h, { maxNumberDigits: numberDigitsLimit() }), T.bigInteger), v);
      assert.equal(readJsonb(j, { maxNumberDigits: numberDigitsLimit() }), v);
    });
    assert.throws(
      () => fillDefaults(readHessian(h), T.bigInteger),
      /java\.math\.BigInteger of 31250 words \(1000000 bits\) is larger than this server takes \(limits\.maxNumberDigits: 4096 digits, 13607 bits\)/,
    );
    assert.throws(() => readJsonb(j), /a BigInteger of 125001 bytes is larger than this server takes/);
  });

  it("checkDigits counts digits (signs, points, exponents are not digits) and names the limit, not the number", () => {
    withNumberLimits({ maxNumberDigits: 20 }, () => {
      checkDigits(`-${"9".repeat(20)}`, "x");
      checkDigits("-123456789.123456789e+9", "x");
      assert.throws(
        () => checkDigits("1".repeat(21), "parameter #1 (id)"),
        (e: Error) =>
          e.message === "parameter #1 (id) is a number of 21 digits, more than this server takes (limits.maxNumberDigits: 20 digits); send a smaller number",
      );
    });
    assert.equal(numberDigitsLimit(), 4096, "the default is back after the scope");
  });

  it("withNumberLimits nests and restores, also when the body throws", () => {
    withNumberLimits({ maxNumberDigits: 100 }, () => {
      assert.equal(numberDigitsLimit(), 100);
      assert.throws(() =>
        withNumberLimits({ maxNumberDigits: 50 }, () => {
          assert.equal(numberDigitsLimit(), 50);
          throw new Error("x");
        }),
      );
      assert.equal(numberDigitsLimit(), 100);
      withNumberLimits(undefined, () => assert.equal(numberDigitsLimit(), 4096));
    });
    assert.equal(numberDigitsLimit(), 4096);
  });

  it("describeBigInt: the value up to 256 bits, the size beyond (no long decimal text in a message)", () => {
    assert.equal(describeBigInt(-42n), "integer -42");
    assert.equal(describeBigInt(2n ** 255n), `integer ${2n ** 255n}`);
    assert.equal(describeBigInt(2n ** 4000n), "an integer of about 1205 digits");
  });
});
