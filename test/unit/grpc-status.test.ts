import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Code } from "../../src/protocol/code.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import {
  decodeGrpcMessage,
  decodeStatusDetails,
  encodeGrpcMessage,
  encodeStatusDetails,
  errorFromGrpcTrailers,
  statusHeaders,
  toUnpaddedBase64,
} from "../../src/protocol-grpc/status.js";

/** Well-formed text: any code point, no lone surrogates (those cannot be UTF-8 at all). */
const text = fc.string({ unit: "binary", maxLength: 60 });

describe("grpc-message encoding", () => {
  it("printable ASCII without % is sent as it is", () => {
    assert.equal(encodeGrpcMessage("name is not right: x"), "name is not right: x");
    assert.equal(encodeGrpcMessage(""), "");
  });

  it("%, control characters and non-ASCII become %XX of the UTF-8 bytes", () => {
    assert.equal(encodeGrpcMessage("100%"), "100%25");
    assert.equal(encodeGrpcMessage("a\nb"), "a%0Ab");
    assert.equal(encodeGrpcMessage("é"), "%C3%A9");
    assert.equal(encodeGrpcMessage("€ 1"), "%E2%82%AC 1");
    assert.equal(encodeGrpcMessage("😀"), "%F0%9F%98%80");
  });

  it("property: decode(encode(s)) === s for arbitrary unicode", () => {
    fc.assert(
      fc.property(text, (s) => {
        assert.equal(decodeGrpcMessage(encodeGrpcMessage(s)), s);
      }),
    );
  });

  it("property: the encoded form is printable ASCII and every % starts an escape", () => {
    fc.assert(
      fc.property(text, (s) => {
        const e = encodeGrpcMessage(s);
        assert.match(e, /^[\x20-\x7e]*$/);
        assert.doesNotMatch(e, /%(?![0-9A-F]{2})/);
      }),
    );
  });

  it("decoding is lenient: raw text and stray % are kept as they are", () => {
    assert.equal(decodeGrpcMessage("plain text"), "plain text");
    assert.equal(decodeGrpcMessage("100%"), "100%");
    assert.equal(decodeGrpcMessage("50% off %zz"), "50% off %zz");
    assert.equal(decodeGrpcMessage("caf%c3%a9"), "café");
    assert.equal(decodeGrpcMessage("Java says: ünïcode raw"), "Java says: ünïcode raw");
  });
});

describe("statusHeaders", () => {
  it("success is grpc-status 0 and nothing else", () => {
    const t: Record<string, string | string[] | number> = {};
    statusHeaders(undefined, t);
    assert.deepEqual(t, { "grpc-status": "0" });
  });

  it("an error: metadata, grpc-status, encoded grpc-message", () => {
    const t: Record<string, string | string[] | number> = {};
    statusHeaders(new RpcError(Code.NotFound, "no such user: ü", { metadata: { "x-a": "1", "x-b": ["2", "3"] } }), t);
    assert.deepEqual(t, { "x-a": "1", "x-b": ["2", "3"], "grpc-status": "5", "grpc-message": "no such user: %C3%BC" });
  });

  it("no message, no grpc-message; no details, no grpc-status-details-bin", () => {
    const t: Record<string, string | string[] | number> = {};
    statusHeaders(new RpcError(Code.Internal, ""), t);
    assert.deepEqual(t, { "grpc-status": "13" });
  });

  it("details go out as unpadded base64 google.rpc.Status", () => {
    const t: Record<string, string | string[] | number> = {};
    const value = Uint8Array.from([1, 2, 3, 4]);
    statusHeaders(new RpcError(Code.InvalidArgument, "bad", { details: [{ type: "google.rpc.BadRequest", value }] }), t);
    const bin = t["grpc-status-details-bin"] as string;
    assert.doesNotMatch(bin, /=/);
    const st = decodeStatusDetails(Buffer.from(bin, "base64"));
    assert.equal(st.code, Code.InvalidArgument);
    assert.equal(st.message, "bad");
    assert.equal(st.details.length, 1);
    assert.equal(st.details[0].type, "type.googleapis.com/google.rpc.BadRequest");
    assert.deepEqual([...st.details[0].value], [1, 2, 3, 4]);
  });
});

describe("errorFromGrpcTrailers", () => {
  it("grpc-status 0 is OK: undefined", () => {
    assert.equal(errorFromGrpcTrailers({ "grpc-status": "0" }), undefined);
    assert.equal(errorFromGrpcTrailers({ "grpc-status": "0", "grpc-message": "ignored" }), undefined);
    assert.equal(errorFromGrpcTrailers({ "grpc-status": ["0"] }), undefined);
  });

  it("missing grpc-status is internal", () => {
    const e = errorFromGrpcTrailers({ "x-other": "1" });
    assert.ok(e instanceof RpcError);
    assert.equal(e.code, Code.Internal);
    assert.match(e.message, /grpc-status/);
  });

  it("code and decoded message; trailers become metadata without the grpc-* headers", () => {
    const e = errorFromGrpcTrailers({ "grpc-status": "7", "grpc-message": "caf%C3%A9 closed", "x-why": "late" })!;
    assert.equal(e.code, Code.PermissionDenied);
    assert.equal(e.message, "caf\u00e9 closed");
    assert.deepEqual(e.metadata, { "x-why": "late" });
  });

  it("an out-of-range or non-numeric grpc-status is unknown", () => {
    assert.equal(errorFromGrpcTrailers({ "grpc-status": "17" })!.code, Code.Unknown);
    assert.equal(errorFromGrpcTrailers({ "grpc-status": "abc" })!.code, Code.Unknown);
    assert.equal(errorFromGrpcTrailers({ "grpc-status": "-1" })!.code, Code.Unknown);
  });

  it("an empty or non-decimal grpc-status is not success", () => {
    for (const v of ["", " ", "0x0", "0e1", "+0"]) {
      assert.notEqual(errorFromGrpcTrailers({ "grpc-status": v }), undefined, `grpc-status "${v}"`);
    }
  });

  it("details round trip through encodeStatusDetails (type names without the URL prefix)", () => {
    const details = [
      { type: "google.rpc.ErrorInfo", value: Uint8Array.from([10, 3, 102, 111, 111]) },
      { type: "type.googleapis.com/acme.Thing", value: new Uint8Array(0) },
    ];
    const e = new RpcError(Code.FailedPrecondition, "precondition", { details });
    const trailers: Record<string, string | string[] | number> = {};
    statusHeaders(e, trailers);
    const back = errorFromGrpcTrailers(trailers as Record<string, string>)!;
    assert.equal(back.code, Code.FailedPrecondition);
    assert.equal(back.message, "precondition");
    assert.deepEqual(
      back.details.map((d) => ({ type: d.type, value: [...d.value] })),
      [
        { type: "google.rpc.ErrorInfo", value: [10, 3, 102, 111, 111] },
        { type: "acme.Thing", value: [] },
      ],
    );
  });

  it("padded base64 details decode too", () => {
    const bin = encodeStatusDetails(Code.Aborted, "x", [{ type: "a.B", value: Uint8Array.from([9]) }]).toString("base64");
    const e = errorFromGrpcTrailers({ "grpc-status": "10", "grpc-status-details-bin": bin })!;
    assert.deepEqual(
      e.details.map((d) => d.type),
      ["a.B"],
    );
  });

  it("undecodable details do not hide the status", () => {
    const e = errorFromGrpcTrailers({ "grpc-status": "14", "grpc-message": "down", "grpc-status-details-bin": "////" })!;
    assert.equal(e.code, Code.Unavailable);
    assert.equal(e.message, "down");
    assert.deepEqual(e.details, []);
  });

  it("property: any error survives statusHeaders → errorFromGrpcTrailers", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        text,
        fc.array(fc.record({ type: fc.stringMatching(/^[a-z]{1,8}(\.[A-Z][a-z]{0,6}){1,2}$/), value: fc.uint8Array({ maxLength: 20 }) }), {
          maxLength: 3,
        }),
        (code, message, details) => {
          const t: Record<string, string | string[] | number> = {};
          statusHeaders(new RpcError(code, message, { details }), t);
          const e = errorFromGrpcTrailers(t as Record<string, string>)!;
          assert.equal(e.code, code);
          assert.equal(e.message, message);
          assert.deepEqual(
            e.details.map((d) => ({ type: d.type, value: [...d.value] })),
            details.map((d) => ({ type: d.type, value: [...d.value] })),
          );
        },
      ),
    );
  });

  it("toUnpaddedBase64 drops only the padding", () => {
    assert.equal(toUnpaddedBase64(Uint8Array.from([1])), "AQ");
    assert.equal(toUnpaddedBase64(Uint8Array.from([1, 2, 3])), "AQID");
  });
});
