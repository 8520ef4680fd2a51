import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { badRequestViolations, Field, Method, RpcError, Service } from "../../src/index.js";
import { compileValidator } from "../../src/codec/validation.js";
import { describeService } from "../../src/service/describe.js";
import type { MethodDescriptor } from "../../src/service/descriptors.js";

/** A one-method service declared with `@Method({ params })`, its descriptor. */
function method(params: object[]): MethodDescriptor {
  @Service(`checks.S${Math.random().toString(36).slice(2)}`)
  class S {
    @Method({ params: params as never })
    m(..._args: unknown[]): void {}
  }
  return describeService(S).methods[0];
}

/** The violations `args` give, as `[field, description]`; empty when valid. */
function violations(md: MethodDescriptor, args: unknown[]): [string, string][] {
  const validate = compileValidator(md);
  assert.ok(validate, "the method has a validator");
  try {
    validate(args);
    return [];
  } catch (e) {
    assert.ok(e instanceof RpcError);
    return badRequestViolations(e).map((v) => [v.field, v.description]);
  }
}

describe("validation checks, one by one", () => {
  it("no constraints (a description alone checks nothing): no validator, the invoker stays a direct call", () => {
    assert.equal(
      compileValidator(
        method([
          { name: "a", type: String },
          { name: "b", type: Number, description: "how many" },
        ]),
      ),
      undefined,
    );
  });

  it("format email: the WHATWG rule", () => {
    const md = method([{ name: "e", type: String, format: "email" }]);
    for (const ok of ["ann@example.com", "a.b+c@sub.example.co", "x@localhost"]) assert.deepEqual(violations(md, [ok]), [], ok);
    for (const bad of ["", "ann", "ann@", "@example.com", "ann@exa mple.com", "ann@@example.com", "ann@-example.com"]) {
      assert.deepEqual(violations(md, [bad]), [["e", "must be an email address"]], bad);
    }
  });

  it("format uuid: RFC 9562 text, any version", () => {
    const md = method([{ name: "u", type: String, format: "uuid" }]);
    for (const ok of ["123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"])
      assert.deepEqual(violations(md, [ok]), [], ok);
    for (const bad of ["123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g", "{123e4567-e89b-12d3-a456-426614174000}"]) {
      assert.deepEqual(violations(md, [bad]), [["u", "must be a UUID"]], bad);
    }
  });

  it("format uri: absolute, with a scheme, no spaces", () => {
    const md = method([{ name: "u", type: String, format: "uri" }]);
    for (const ok of ["https://example.com/a?b=c#d", "mailto:ann@example.com", "urn:isbn:0451450523"]) assert.deepEqual(violations(md, [ok]), [], ok);
    for (const bad of ["/relative/path", "example.com", "http://exa mple.com", "1http://x", ""]) {
      assert.deepEqual(violations(md, [bad]), [["u", "must be an absolute URI (with a scheme)"]], bad);
    }
  });

  it("format date-time: RFC 3339 and a real date", () => {
    const md = method([{ name: "t", type: String, format: "date-time" }]);
    for (const ok of ["2026-11-25T10:00:00Z", "2026-11-25t10:00:00.123+01:00"]) assert.deepEqual(violations(md, [ok]), [], ok);
    for (const bad of ["2026-11-25", "2026-11-25T10:00:00", "2026-13-01T00:00:00Z", "2026-11-25 10:00:00Z"]) {
      assert.deepEqual(violations(md, [bad]), [["t", "must be an RFC 3339 date-time"]], bad);
    }
  });

  it("string lengths count Unicode code points: an emoji is one character", () => {
    const md = method([{ name: "s", type: String, minLength: 2, maxLength: 3 }]);
    assert.deepEqual(violations(md, ["😀😀😀"]), []);
    assert.deepEqual(violations(md, ["😀😀😀😀"]), [["s", "must be at most 3 characters long"]]);
    assert.deepEqual(violations(md, ["😀"]), [["s", "must be at least 2 characters long"]]);
  });

  it("a global or sticky RegExp does not make the check stateful", () => {
    const md = method([{ name: "s", type: String, pattern: /^a+$/g }]);
    for (let i = 0; i < 3; i++) assert.deepEqual(violations(md, ["aaa"]), []);
  });

  it("bounds of bigints and dates; a Date bound, ISO text or epoch ms", () => {
    const md = method([
      { name: "n", type: BigInt, min: 10n, max: 20 },
      { name: "d", type: Date, max: new Date("2030-01-01T00:00:00Z") },
      { name: "e", type: Date, min: 0 },
    ]);
    assert.deepEqual(violations(md, [15n, new Date("2029-01-01"), new Date(1)]), []);
    assert.deepEqual(violations(md, [21n, new Date("2031-01-01"), new Date(-1)]), [
      ["n", "must be at most 20"],
      ["d", "must be at or before 2030-01-01T00:00:00.000Z"],
      ["e", "must be at or after 1970-01-01T00:00:00.000Z"],
    ]);
  });

  it("enum of numbers; maps count entries; unnamed parameters are arg<N>", () => {
    const md = method([
      { type: Number, enum: [1, 2, 3] },
      { name: "m", type: Map, maxItems: 1 },
    ]);
    assert.deepEqual(
      violations(md, [
        4,
        new Map([
          ["a", "1"],
          ["b", "2"],
        ]),
      ]),
      [
        ["arg1", "must be one of 1, 2, 3"],
        ["m", "must have at most 1 entries"],
      ],
    );
  });

  it("an optional value that is absent, null, or an empty optional array is not checked", () => {
    const md = method([
      { name: "s", type: String, optional: true, minLength: 3 },
      { name: "a", type: [String], optional: true, minItems: 2 },
    ]);
    assert.deepEqual(violations(md, [undefined, undefined]), []);
    assert.deepEqual(violations(md, [null, []]), []);
    assert.deepEqual(violations(md, ["ab", ["x"]]), [
      ["s", "must be at least 3 characters long"],
      ["a", "must have at least 2 elements"],
    ]);
  });

  it("issue 33: 100 violations are kept, all are counted; the message names what fits in 900 bytes, then 'and N more violations'", () => {
    const md = method([{ name: "t", type: [String], pattern: "^a$" }]);
    const validate = compileValidator(md)!;
    const e = (() => {
      try {
        validate([Array(250).fill("b")]);
      } catch (x) {
        return x as RpcError;
      }
      assert.fail("no violation");
    })();
    const list = badRequestViolations(e).map((v) => [v.field, v.description]);
    assert.equal(list.length, 100);
    assert.deepEqual(list[99], ["t[99]", "must match ^a$"]);
    const m = /; and (\d+) more violations$/.exec(e.message);
    assert.ok(m, e.message);
    assert.equal(e.message.split("; ").length - 1 + Number(m[1]), 250);
    assert.ok(Buffer.byteLength(e.message) <= 1024);
  });

  it("issue 33: an array over maxItems is one violation, its elements unchecked; at the bound they are checked", () => {
    const md = method([{ name: "t", type: [String], pattern: "^a$", maxItems: 2 }]);
    assert.deepEqual(violations(md, [["b", "b", "b"]]), [["t", "must have at most 2 elements"]]);
    assert.deepEqual(violations(md, [["b", "a"]]), [["t[0]", "must match ^a$"]]);
  });

  it("paths through array elements and class fields stay right around violations (a path is built only for a kept one)", () => {
    class Line {
      @Field({ type: [String], pattern: "^a$" }) tags!: string[];
      @Field({ type: Number, min: 1, optional: true }) qty?: number;
    }
    const md = method([
      { name: "lines", type: [Line] },
      { name: "n", type: Number, min: 1 },
    ]);
    assert.deepEqual(violations(md, [[{ tags: ["a", "b"], qty: 0 }, { tags: ["b"] }, { tags: [] }], 0]), [
      ["lines[0].tags[1]", "must match ^a$"],
      ["lines[0].qty", "must be at least 1"],
      ["lines[1].tags[0]", "must match ^a$"],
      ["n", "must be at least 1"],
    ]);
  });

  it("the next call does not see the previous call's violations", () => {
    const md = method([{ name: "n", type: Number, min: 1 }]);
    assert.equal(violations(md, [0]).length, 1);
    assert.deepEqual(violations(md, [5]), []);
    assert.equal(violations(md, [0]).length, 1);
  });
});
