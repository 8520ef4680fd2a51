import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDisposition } from "../../src/codec/content-disposition.js";

/** A header as the multipart reader hands it over: one character per byte. */
const wire = (s: string) => Buffer.from(s, "utf8").toString("latin1");
const params = (h: string) => Object.fromEntries(parseDisposition(h).params);

describe("parseDisposition (a multipart part's Content-Disposition)", () => {
  it("type in lower case, names in lower case, quoted and token values", () => {
    const d = parseDisposition('Form-Data; Name="a b"; FILENAME=x.txt');
    assert.equal(d.type, "form-data");
    assert.deepEqual(Object.fromEntries(d.params), { name: "a b", filename: "x.txt" });
    assert.equal(parseDisposition("form-data").type, "form-data");
    assert.deepEqual(params("form-data"), {});
  });

  it("quoted strings: backslash escapes, semicolons and equals signs inside", () => {
    assert.deepEqual(params('form-data; name="a\\"b"; filename="c;d=e.txt"'), { name: 'a"b', filename: "c;d=e.txt" });
    assert.deepEqual(params('form-data; name="x\\\\y"'), { name: "x\\y" });
  });

  it("raw UTF-8 bytes in a quoted value are read as UTF-8", () => {
    assert.deepEqual(params(wire('form-data; name="f"; filename="résumé 日本.txt"')), { name: "f", filename: "résumé 日本.txt" });
  });

  it("RFC 5987 extended values win over the plain one, in either order", () => {
    assert.deepEqual(params('form-data; name="f"; filename="r_sum_.txt"; filename*=UTF-8\'\'r%C3%A9sum%C3%A9.txt'), { name: "f", filename: "résumé.txt" });
    assert.deepEqual(params('form-data; name="f"; filename*=utf-8\'en\'r%C3%A9sum%C3%A9.txt; filename="r_sum_.txt"'), { name: "f", filename: "résumé.txt" });
    assert.deepEqual(params("form-data; name=\"f\"; filename*=ISO-8859-1''caf%E9"), { name: "f", filename: "café" });
  });

  it("malformed parts are left out, never thrown", () => {
    assert.deepEqual(params('form-data; name="f"; filename*=nonsense'), { name: "f" });
    assert.deepEqual(params("form-data; name=\"f\"; filename*=x-unknown-charset''a"), { name: "f" });
    assert.deepEqual(params('form-data; junk; name="f"; ; =v'), { name: "f" });
    assert.deepEqual(params('form-data; name="unterminated'), { name: "unterminated" });
    assert.deepEqual(params("form-data; filename*=UTF-8''100%"), { filename: "100%" });
  });
});
