import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { badRequestViolations, encodeBadRequest, truncateBadRequest } from "../../src/protocol/bad-request.js";
import { Code } from "../../src/protocol/code.js";
import { connectErrorObject } from "../../src/protocol/error-json.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import { boundMessage, cutText, MAX_MESSAGE_BYTES, quote } from "../../src/protocol/wire-text.js";
import { errorFromGrpcTrailers, MAX_STATUS_DETAILS_BYTES, statusHeaders } from "../../src/protocol-grpc/status.js";
import { errorBody } from "../../src/protocol/error-json.js";

describe("error text bounds (issue 33)", () => {
  it("boundMessage: a message within 1 KiB of UTF-8 is kept; a longer one is cut at a character and ends with …, 1 KiB in all", () => {
    assert.equal(boundMessage("short"), "short");
    const exact = "a".repeat(MAX_MESSAGE_BYTES);
    assert.equal(boundMessage(exact), exact);
    const cut = boundMessage("a".repeat(MAX_MESSAGE_BYTES + 1));
    assert.equal(cut, `${"a".repeat(MAX_MESSAGE_BYTES - 3)}…`);
    assert.equal(Buffer.byteLength(cut), MAX_MESSAGE_BYTES);
    // 😀 is 4 bytes and a surrogate pair: never split.
    const emoji = boundMessage("😀".repeat(1000));
    assert.ok(Buffer.byteLength(emoji) <= MAX_MESSAGE_BYTES);
    assert.equal(emoji, `${"😀".repeat(255)}…`);
  });

  it("property: boundMessage keeps short text, cuts long text to a prefix + … within the bound, never a lone surrogate", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 1500 }), fc.integer({ min: 8, max: 1200 }), (s, max) => {
        const out = boundMessage(s, max);
        if (Buffer.byteLength(s) <= max) assert.equal(out, s);
        else {
          assert.ok(Buffer.byteLength(out) <= max, `${Buffer.byteLength(out)} > ${max}`);
          assert.ok(out.endsWith("…"));
          assert.ok(s.startsWith(out.slice(0, -1)));
          assert.ok(!/[\ud800-\udbff]$/.test(out.slice(0, -1)));
        }
      }),
    );
  });

  it("cutText and quote: 100 characters at most, JSON-quoted, control characters escaped", () => {
    assert.equal(cutText("abc"), "abc");
    assert.equal(cutText("x".repeat(500)), `${"x".repeat(99)}…`);
    assert.equal(cutText(`${"x".repeat(98)}😀yy`), `${"x".repeat(98)}…`);
    assert.equal(quote("text/plain"), '"text/plain"');
    assert.equal(quote("a\r\nb"), '"a\\r\\nb"');
    assert.equal(quote("z".repeat(1000)).length, 102);
  });

  it("every writer cuts the message: Triple HTTP body, Connect JSON, gRPC status (grpc-message and the Status in details)", () => {
    const err = new RpcError(Code.InvalidArgument, `bad: ${"v".repeat(200_000)}`, { details: [{ type: "google.rpc.ErrorInfo", value: new Uint8Array(10) }] });
    assert.equal(Buffer.byteLength(JSON.parse(errorBody(err)).message), MAX_MESSAGE_BYTES);
    assert.equal(Buffer.byteLength(String(connectErrorObject(err).message)), MAX_MESSAGE_BYTES);
    const t: Record<string, string | string[] | number> = {};
    statusHeaders(err, t);
    const back = errorFromGrpcTrailers(t as Record<string, string>)!;
    assert.equal(Buffer.byteLength(back.message), MAX_MESSAGE_BYTES);
    assert.equal(back.details.length, 1);
    // The RpcError itself keeps its whole text.
    assert.equal(err.message.length, 200_005);
  });

  it("grpc-status-details-bin stays within 4 KiB: a BadRequest keeps the violations that fit, another detail too large is left out", () => {
    const violations = Array.from({ length: 100 }, (_, i) => ({ field: `tags[${i}]`, description: `must match ^[a-z]+$ ${"·".repeat(20)}` }));
    const big = new RpcError(Code.InvalidArgument, "bad", {
      details: [{ type: "google.rpc.ErrorInfo", value: new Uint8Array(20_000) }, encodeBadRequest(violations)],
    });
    const t: Record<string, string | string[] | number> = {};
    statusHeaders(big, t);
    const bin = Buffer.from(String(t["grpc-status-details-bin"]), "base64");
    assert.ok(bin.length <= MAX_STATUS_DETAILS_BYTES, `${bin.length} bytes`);
    const back = errorFromGrpcTrailers(t as Record<string, string>)!;
    assert.deepEqual(
      back.details.map((d) => d.type),
      ["google.rpc.BadRequest"],
    );
    const kept = badRequestViolations(back);
    assert.ok(kept.length > 10 && kept.length < 100, `${kept.length} violations kept`);
    assert.deepEqual(kept, violations.slice(0, kept.length));
    // Small details pass untouched.
    const small = new RpcError(Code.InvalidArgument, "bad", { details: [encodeBadRequest(violations.slice(0, 3))] });
    const t2: Record<string, string | string[] | number> = {};
    statusHeaders(small, t2);
    assert.equal(badRequestViolations(errorFromGrpcTrailers(t2 as Record<string, string>)!).length, 3);
  });

  it("truncateBadRequest: whole violations only; undefined when not one fits", () => {
    const d = encodeBadRequest([
      { field: "a", description: "x".repeat(50) },
      { field: "b", description: "y" },
    ]);
    assert.equal(truncateBadRequest(d, 10_000), d);
    assert.deepEqual(badRequestViolations({ details: [truncateBadRequest(d, 60)!] }), [{ field: "a", description: "x".repeat(50) }]);
    assert.equal(truncateBadRequest(d, 20), undefined);
  });
});
