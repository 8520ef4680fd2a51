import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Code } from "../../src/protocol/code.js";
import { httpStatusOf, legacyStatusOf } from "../../src/protocol/status-table.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import { parseTriTimeout } from "../../src/protocol-triple/wire.js";

const HEADER = "tri-service-timeout";

function assertInvalid(header: string, value: string): void {
  assert.throws(
    () => parseTriTimeout(header, value),
    (e: unknown) => {
      assert.ok(e instanceof RpcError, `"${value}" should throw an RpcError`);
      assert.equal(e.code, Code.InvalidArgument);
      assert.equal(httpStatusOf(e), 400);
      assert.equal(legacyStatusOf(e), 40);
      assert.ok(e.message.includes(header), `message names the header: ${e.message}`);
      assert.ok(e.message.includes(`"${value}"`), `message quotes the value: ${e.message}`);
      return true;
    },
  );
}

describe("parseTriTimeout", () => {
  it("absent or empty is undefined", () => {
    assert.equal(parseTriTimeout(HEADER, undefined), undefined);
    assert.equal(parseTriTimeout(HEADER, ""), undefined);
  });

  it("integer milliseconds, 1 to 10 digits", () => {
    assert.equal(parseTriTimeout(HEADER, "0"), 0);
    assert.equal(parseTriTimeout(HEADER, "1500"), 1500);
    assert.equal(parseTriTimeout(HEADER, "0042"), 42);
    assert.equal(parseTriTimeout(HEADER, "9999999999"), 9_999_999_999);
  });

  it("more than 10 digits is invalid_argument (400, legacy 40)", () => {
    assertInvalid(HEADER, "12345678901");
  });

  it("anything but digits is invalid_argument naming the header it came from", () => {
    for (const v of ["-1", "1.5", "1e3", " 1", "1 ", "abc", "1s", "0x10", "+1", "１"]) assertInvalid(HEADER, v);
    assertInvalid("rest-service-timeout", "soon");
  });

  it("property: any 1-10 digit string parses to its number", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^\d{1,10}$/), (digits) => {
        assert.equal(parseTriTimeout(HEADER, digits), Number(digits));
      }),
    );
  });
});
