import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import * as protobuf from "protobufjs";
import * as protojson from "protobufjs/ext/protojson";
import { fastFromJson, fastToJson } from "../../src/codec/protojson-fast.js";

const root = protobuf.parse(
  `syntax = "proto3";
   package t;
   message Simple { string user_name = 1; bool ok = 2; int32 n = 3; uint32 u = 4; double d = 5; float f = 6; sint32 s = 7; }
   message WithOptional { optional string a = 1; }
   message WithRepeated { repeated string a = 1; }
   message WithLong { int64 a = 1; }`,
  { keepCase: true },
).root;
root.resolveAll();
const Simple = root.lookupType("t.Simple");

/** What protojson does, as a comparable outcome. */
function slowFrom(value: Record<string, unknown>): unknown {
  try {
    return { ok: Simple.toObject(protojson.fromJson(Simple, value, { ignoreUnknownFields: true })) };
  } catch {
    return { error: true };
  }
}

const anyValue = fc.oneof(
  fc.string(),
  fc.constantFrom("", "\uD800", "a\uDC00b", "12", "NaN"),
  fc.boolean(),
  fc.integer({ min: -3_000_000_000, max: 5_000_000_000 }),
  fc.double(),
  fc.constantFrom(0, -0, 1.5, 3.5e38, Number.MAX_SAFE_INTEGER),
  fc.constant(null),
  fc.constant([1]),
  fc.constant({}),
);
const keys = fc.constantFrom("user_name", "userName", "ok", "n", "u", "d", "f", "s", "other", "__proto__");

describe("compiled ProtoJSON fast path matches protobufjs protojson", () => {
  it("fromJson: same message, or defers to protojson", () => {
    fc.assert(
      fc.property(fc.dictionary(keys, anyValue, { maxKeys: 6 }), (value) => {
        const fast = fastFromJson(Simple, value);
        if (fast === undefined) return; // protojson decides
        assert.deepEqual({ ok: Simple.toObject(fast) }, slowFrom(value));
      }),
      { numRuns: 3000 },
    );
  });

  it("fromJson handles the plain cases itself", () => {
    const m = fastFromJson(Simple, { userName: "a", ok: true, n: -5, u: 7, d: 0.5, f: 2, s: 0, extra: 1 });
    assert.ok(m);
    assert.deepEqual(Simple.toObject(m), { user_name: "a", ok: true, n: -5, u: 7, d: 0.5, f: 2 });
  });

  it("fromJson defers on wrong types, duplicates and out-of-range values", () => {
    for (const v of [{ n: "5" }, { n: 1.5 }, { u: -1 }, { user_name: 3 }, { user_name: "a", userName: "b" }, { ok: 1 }]) {
      assert.equal(fastFromJson(Simple, v), undefined, JSON.stringify(v));
    }
  });

  it("toJson: same JSON, or defers to protojson", () => {
    const fields = fc.record(
      {
        user_name: anyValue,
        ok: anyValue,
        n: anyValue,
        u: anyValue,
        d: anyValue,
        f: anyValue,
        s: anyValue,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fields, (message) => {
        const fast = fastToJson(Simple, message);
        if (fast === undefined) return;
        assert.equal(JSON.stringify(fast), JSON.stringify(protojson.toJson(Simple, message)));
      }),
      { numRuns: 3000 },
    );
    const msg = Simple.create({ user_name: "z", n: 3, d: Number.NaN });
    assert.equal(JSON.stringify(fastToJson(Simple, msg)), JSON.stringify(protojson.toJson(Simple, msg)));
  });

  it("types with presence, repeated or 64-bit fields always go to protojson", () => {
    for (const name of ["t.WithOptional", "t.WithRepeated", "t.WithLong"]) {
      const t = root.lookupType(name);
      assert.equal(fastFromJson(t, { a: "1" }), undefined, name);
      assert.equal(fastToJson(t, { a: "1" }), undefined, name);
    }
  });
});
