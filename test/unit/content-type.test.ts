import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseMediaType } from "../../src/protocol/content-type.js";

describe("parseMediaType", () => {
  it("missing or empty header is undefined", () => {
    assert.equal(parseMediaType(undefined), undefined);
    assert.equal(parseMediaType(""), undefined);
  });

  it("lower-cases and trims the media type", () => {
    assert.equal(parseMediaType("  Application/JSON ")!.type, "application/json");
    assert.equal(parseMediaType("application/grpc+proto")!.type, "application/grpc+proto");
    assert.deepEqual({ ...parseMediaType("text/plain")!.params }, {});
  });

  it("parameters: lower-case, trimmed names; values trimmed, case kept", () => {
    const mt = parseMediaType("application/json; Charset = UTF-8 ;  X-Thing=Value")!;
    assert.equal(mt.type, "application/json");
    assert.deepEqual({ ...mt.params }, { charset: "UTF-8", "x-thing": "Value" });
  });

  it("quoted values lose their quotes", () => {
    const mt = parseMediaType('text/plain; charset="utf-8"; name="a b=c"')!;
    assert.equal(mt.params.charset, "utf-8");
    assert.equal(mt.params.name, "a b=c");
    // A lone quote is not a quoted string.
    assert.equal(parseMediaType('text/plain; x="')!.params.x, '"');
  });

  it("parameters without '=' are skipped", () => {
    const mt = parseMediaType("text/plain; flag; charset=utf-8")!;
    assert.deepEqual({ ...mt.params }, { charset: "utf-8" });
  });

  it("params has no prototype: inherited names are not parameters", () => {
    const mt = parseMediaType("text/plain")!;
    assert.equal(mt.params.toString, undefined);
    assert.equal("constructor" in mt.params, false);
  });

  it("headers without a boundary are cached: the same value returns the same object", () => {
    const h = "application/json; charset=utf-8; x-cache-test=1";
    assert.equal(parseMediaType(h), parseMediaType(h));
  });

  it("a boundary is not cached but still parsed", () => {
    const h = 'multipart/form-data; boundary="----Boundary7MA4YWxk"';
    const a = parseMediaType(h)!;
    const b = parseMediaType(h)!;
    assert.notEqual(a, b, "a header with a boundary must not be served from the cache");
    assert.equal(a.type, "multipart/form-data");
    assert.equal(a.params.boundary, "----Boundary7MA4YWxk");
    assert.deepEqual(a, b);
    const c = parseMediaType("multipart/form-data; BOUNDARY=xyz")!;
    assert.equal(c.params.boundary, "xyz");
    assert.notEqual(c, parseMediaType("multipart/form-data; BOUNDARY=xyz"));
  });

  it("the cache stays bounded: many distinct headers still parse correctly", () => {
    for (let i = 0; i < 600; i++) {
      const mt = parseMediaType(`application/x-n${i}; charset=c${i}`)!;
      assert.equal(mt.type, `application/x-n${i}`);
      assert.equal(mt.params.charset, `c${i}`);
    }
  });
});
