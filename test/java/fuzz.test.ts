import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { HessianError, readHessian } from "../../src/serialization/hessian2/reader.js";
import { writeHessian } from "../../src/serialization/hessian2/writer.js";
import { JsonbError, readJsonb, writeJsonb } from "../../src/serialization/jsonb/index.js";

/** JSON-like values both writers take untyped, and what reading them back gives. */
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.string({ unit: "grapheme" }),
    fc.array(tie("v"), { maxLength: 5 }),
    fc
      .dictionary(
        fc.string({ unit: "grapheme-ascii" }).filter((k) => !["__proto__", "constructor", "prototype"].includes(k)),
        tie("v"),
        { maxKeys: 5 },
      )
      .map((d) => ({ ...d })),
  ),
})).v;

const only = (kind: new (...a: never[]) => Error, read: (b: Uint8Array) => unknown) => (bytes: Uint8Array) => {
  try {
    read(bytes);
  } catch (e) {
    if (!(e instanceof kind)) throw e;
  }
};

describe("hessian2 and JSONB readers on arbitrary bytes", () => {
  it("round trips: what the writers write reads back equal", () => {
    fc.assert(
      fc.property(value, (v) => {
        assert.deepEqual(readHessian(writeHessian(v)), v);
        assert.deepEqual(readJsonb(writeJsonb(v)), v);
      }),
      { numRuns: 300 },
    );
  });

  it("random and mutated bytes: a value or the reader's own error, nothing else", () => {
    const mutate = (write: (v: unknown) => Buffer) =>
      fc.tuple(value, fc.nat(), fc.integer({ min: 0, max: 255 })).map(([v, at, byte]) => {
        const b = Buffer.from(write(v));
        if (b.length > 0) b[at % b.length] = byte;
        return b;
      });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), only(HessianError, readHessian)), { numRuns: 2000 });
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), only(JsonbError, readJsonb)), { numRuns: 2000 });
    fc.assert(fc.property(mutate(writeHessian), only(HessianError, readHessian)), { numRuns: 1000 });
    fc.assert(fc.property(mutate(writeJsonb), only(JsonbError, readJsonb)), { numRuns: 1000 });
  });
});
