import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { callOptions, splitArgs } from "../../src/runtime/call-options.js";

describe("splitArgs", () => {
  it("marked options (callOptions()) are always taken from the end", () => {
    const opts = callOptions({ timeoutMs: 5 });
    assert.deepEqual(splitArgs([1, opts], 1), [[1], opts]);
    // Even where a parameter would be: a marked object is never an argument.
    const [args, o] = splitArgs([opts], 1);
    assert.deepEqual(args, []);
    assert.equal(o, opts);
    assert.equal(splitArgs(["a", "b", opts], 5)[1], opts);
  });

  it("callOptions copies the options and the mark is not enumerable", () => {
    const raw = { timeoutMs: 7 };
    const opts = callOptions(raw);
    assert.notEqual(opts, raw);
    assert.deepEqual(Object.keys(opts), ["timeoutMs"]);
    assert.equal(JSON.stringify(opts), '{"timeoutMs":7}');
    // The original stays unmarked: as the only argument of a 1-parameter method it is an argument.
    assert.deepEqual(splitArgs([raw], 1), [[raw], undefined]);
  });

  it("a trailing plain object beyond the parameter count is the options", () => {
    const o = { timeoutMs: 100, metadata: { "x-a": "1" } };
    const [args, opts] = splitArgs(["x", o], 1);
    assert.deepEqual(args, ["x"]);
    assert.equal(opts, o);
    assert.deepEqual(splitArgs([o], 0), [[], o]);
  });

  it("a trailing plain object within the parameter count is an argument", () => {
    const o = { name: "n" };
    assert.deepEqual(splitArgs([o], 1), [[o], undefined]);
    assert.deepEqual(splitArgs([1, o], 2), [[1, o], undefined]);
  });

  it("arrays are never taken as options", () => {
    assert.deepEqual(splitArgs([1, [2, 3]], 1), [[1, [2, 3]], undefined]);
    assert.deepEqual(splitArgs([[]], 0), [[[]], undefined]);
  });

  it("fewer args than parameters: nothing is options", () => {
    assert.deepEqual(splitArgs([], 2), [[], undefined]);
    assert.deepEqual(splitArgs([{ a: 1 }], 3), [[{ a: 1 }], undefined]);
  });

  it("null and primitives at the end are arguments", () => {
    assert.deepEqual(splitArgs([1, null], 1), [[1, null], undefined]);
    assert.deepEqual(splitArgs([1, "s"], 1), [[1, "s"], undefined]);
    assert.deepEqual(splitArgs([1, undefined], 1), [[1, undefined], undefined]);
  });

  it("more than one extra argument: the trailing object is not taken unmarked", () => {
    const o = { timeoutMs: 1 };
    assert.deepEqual(splitArgs([1, 2, o], 1), [[1, 2, o], undefined]);
  });

  it("property: without objects at the end, args pass through untouched", () => {
    const prim = fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.constant(undefined));
    fc.assert(
      fc.property(fc.array(fc.anything(), { maxLength: 4 }), prim, fc.nat(6), (head, last, paramCount) => {
        const input = [...head, last];
        const [args, opts] = splitArgs(input, paramCount);
        assert.equal(opts, undefined);
        assert.deepEqual(args, input);
      }),
    );
  });

  it("property: marked options come off the end, whatever precedes them", () => {
    fc.assert(
      fc.property(fc.array(fc.anything(), { maxLength: 4 }), fc.nat(6), (head, paramCount) => {
        const opts = callOptions({ timeoutMs: 1 });
        const [args, got] = splitArgs([...head, opts], paramCount);
        assert.equal(got, opts);
        assert.deepEqual(args, head);
      }),
    );
  });
});
