import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, codeName } from "../../src/protocol/code.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import { codeFromGrpcHttpStatus } from "../../src/protocol/grpc-http-status.js";
import { codeFromHttpStatus, codeFromLegacyStatus, httpStatusOf, legacyStatusOf } from "../../src/protocol/status-table.js";

/**
 * Per code (docs/protocol.md, "Errors"): HTTP status, legacy status; and what a client infers
 * back from that HTTP status (Triple table, gRPC's table) and from that legacy status.
 */
const TABLE: ReadonlyArray<[Code, number, number, Code, Code, Code]> = [
  [Code.OK, 200, 20, Code.Unknown, Code.Unknown, Code.OK],
  [Code.Cancelled, 499, 70, Code.Unknown, Code.Unknown, Code.Unknown],
  [Code.Unknown, 500, 70, Code.Unknown, Code.Unknown, Code.Unknown],
  [Code.InvalidArgument, 400, 40, Code.InvalidArgument, Code.Internal, Code.InvalidArgument],
  [Code.DeadlineExceeded, 408, 31, Code.DeadlineExceeded, Code.Unknown, Code.DeadlineExceeded],
  [Code.NotFound, 404, 60, Code.Unimplemented, Code.Unimplemented, Code.Unimplemented],
  [Code.AlreadyExists, 409, 70, Code.Aborted, Code.Unknown, Code.Unknown],
  [Code.PermissionDenied, 403, 70, Code.PermissionDenied, Code.PermissionDenied, Code.Unknown],
  [Code.ResourceExhausted, 429, 70, Code.Unavailable, Code.Unavailable, Code.Unknown],
  [Code.FailedPrecondition, 412, 40, Code.FailedPrecondition, Code.Unknown, Code.InvalidArgument],
  [Code.Aborted, 409, 70, Code.Aborted, Code.Unknown, Code.Unknown],
  [Code.OutOfRange, 400, 40, Code.InvalidArgument, Code.Internal, Code.InvalidArgument],
  [Code.Unimplemented, 404, 60, Code.Unimplemented, Code.Unimplemented, Code.Unimplemented],
  [Code.Internal, 500, 80, Code.Unknown, Code.Unknown, Code.Internal],
  [Code.Unavailable, 503, 35, Code.Unavailable, Code.Unavailable, Code.Unavailable],
  [Code.DataLoss, 500, 80, Code.Unknown, Code.Unknown, Code.Internal],
  [Code.Unauthenticated, 401, 70, Code.Unauthenticated, Code.Unauthenticated, Code.Unknown],
];

describe("status tables", () => {
  it("the table covers every code 0..16 once, in order", () => {
    assert.deepEqual(
      TABLE.map((r) => r[0]),
      Array.from({ length: 17 }, (_, i) => i),
    );
  });

  it("httpStatusOf: the HTTP status of each code", () => {
    for (const [code, http] of TABLE) assert.equal(httpStatusOf(new RpcError(code, "x")), http, codeName(code));
  });

  it("legacyStatusOf: the legacy Dubbo status of each code", () => {
    for (const [code, , legacy] of TABLE) assert.equal(legacyStatusOf(new RpcError(code, "x")), legacy, codeName(code));
  });

  it("codeFromHttpStatus: what a Triple client infers from each code's HTTP status", () => {
    for (const [code, http, , fromHttp] of TABLE) assert.equal(codeFromHttpStatus(http), fromHttp, `${codeName(code)} (${http})`);
  });

  it("codeFromGrpcHttpStatus: what a gRPC client infers from each code's HTTP status (400 is internal there)", () => {
    for (const [code, http, , , fromGrpc] of TABLE) assert.equal(codeFromGrpcHttpStatus(http), fromGrpc, `${codeName(code)} (${http})`);
  });

  it("codeFromLegacyStatus: what a client infers from each code's legacy status", () => {
    for (const [code, , legacy, , , fromLegacy] of TABLE) {
      assert.equal(codeFromLegacyStatus(legacy), fromLegacy, `${codeName(code)} (${legacy})`);
    }
  });

  it("an error's own httpStatus / legacyStatus override the table", () => {
    const e = new RpcError(Code.Unimplemented, "x", { httpStatus: 405, legacyStatus: 40 });
    assert.equal(httpStatusOf(e), 405);
    assert.equal(legacyStatusOf(e), 40);
    assert.equal(legacyStatusOf(new RpcError(Code.InvalidArgument, "x", { legacyStatus: 25 })), 25);
    assert.equal(legacyStatusOf(new RpcError(Code.DeadlineExceeded, "x", { legacyStatus: 30 })), 30);
    assert.equal(httpStatusOf(new RpcError(Code.Internal, "x", { httpStatus: 415 })), 415);
  });

  it("resource_exhausted with 413 or 431 is legacy 40; with 429 it stays 70", () => {
    assert.equal(legacyStatusOf(new RpcError(Code.ResourceExhausted, "x", { httpStatus: 413 })), 40);
    assert.equal(legacyStatusOf(new RpcError(Code.ResourceExhausted, "x", { httpStatus: 431 })), 40);
    assert.equal(legacyStatusOf(new RpcError(Code.ResourceExhausted, "x", { httpStatus: 429 })), 70);
    // 413 on another code does not change its legacy status.
    assert.equal(legacyStatusOf(new RpcError(Code.Internal, "x", { httpStatus: 413 })), 80);
  });

  it("codeFromHttpStatus: the HTTP-only statuses of the Triple table", () => {
    const rows: Array<[number, Code]> = [
      [413, Code.ResourceExhausted],
      [431, Code.ResourceExhausted],
      [415, Code.Internal],
      [429, Code.Unavailable],
      [502, Code.Unavailable],
      [503, Code.Unavailable],
      [504, Code.Unavailable],
      [418, Code.Unknown],
      [200, Code.Unknown],
      [0, Code.Unknown],
    ];
    for (const [status, code] of rows) assert.equal(codeFromHttpStatus(status), code, String(status));
  });

  it("codeFromGrpcHttpStatus: gRPC's http-grpc-status-mapping, others unknown", () => {
    const rows: Array<[number, Code]> = [
      [400, Code.Internal],
      [401, Code.Unauthenticated],
      [403, Code.PermissionDenied],
      [404, Code.Unimplemented],
      [429, Code.Unavailable],
      [502, Code.Unavailable],
      [503, Code.Unavailable],
      [504, Code.Unavailable],
      [408, Code.Unknown],
      [413, Code.Unknown],
      [415, Code.Unknown],
      [500, Code.Unknown],
    ];
    for (const [status, code] of rows) assert.equal(codeFromGrpcHttpStatus(status), code, String(status));
  });

  it("codeFromLegacyStatus: every Dubbo status, and undefined for numbers outside the table", () => {
    const rows: Array<[number, Code | undefined]> = [
      [20, Code.OK],
      [25, Code.InvalidArgument],
      [30, Code.DeadlineExceeded],
      [31, Code.DeadlineExceeded],
      [35, Code.Unavailable],
      [40, Code.InvalidArgument],
      [50, Code.Internal],
      [60, Code.Unimplemented],
      [70, Code.Unknown],
      [80, Code.Internal],
      [90, Code.Internal],
      [0, undefined],
      [5, undefined],
      [200, undefined],
      [99, undefined],
    ];
    for (const [status, code] of rows) assert.equal(codeFromLegacyStatus(status), code, String(status));
  });

  it("every code's legacy status reads back as a code (no gaps in the legacy table)", () => {
    for (let c = 0; c <= 16; c++) assert.notEqual(codeFromLegacyStatus(legacyStatusOf(new RpcError(c, "x"))), undefined);
  });
});
