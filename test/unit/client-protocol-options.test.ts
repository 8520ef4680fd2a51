import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { closeClient, createClient, type ClientOptions } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";

/**
 * The client's `protocol`, `contentType`, `httpVersion`, `compression` and `serialization`
 * options, checked through the protocol seam: the core picks the protocol (named, or the first
 * that claims the content type) and the protocol checks the rest, each refusal naming the fix.
 */

const PROVIDERS = ["127.0.0.1:1"];

function refused(options: Partial<ClientOptions>, message: RegExp): void {
  assert.throws(
    () => createClient(GreetServiceImpl, { providers: PROVIDERS, ...options } as ClientOptions),
    (e: Error) => {
      assert.ok(e instanceof TypeError, `${e}`);
      assert.match(e.message, message);
      return true;
    },
  );
}

function accepted(options: Partial<ClientOptions>): void {
  closeClient(createClient(GreetServiceImpl, { providers: PROVIDERS, ...options } as ClientOptions));
}

describe("client protocol options", () => {
  it("an unknown protocol lists the registered ones", () => {
    refused({ protocol: "thrift" as never }, /^createClient: protocol must be one of "triple", "grpc", "connect", "grpc-web", "websocket"; got "thrift"$/);
  });

  it("each protocol checks its content types", () => {
    refused({ protocol: "connect", contentType: "grpc+proto" }, /protocol connect takes contentType json or proto, got "grpc\+proto"/);
    refused({ protocol: "grpc-web", contentType: "xml" as never }, /protocol grpc-web takes contentType json or proto, got "xml"/);
    refused({ protocol: "grpc", contentType: "json" }, /protocol grpc needs contentType grpc\+proto or grpc\+json, got "json"/);
    refused({ protocol: "triple", contentType: "grpc+json" }, /contentType grpc\+json is gRPC; use protocol "grpc"/);
    refused({ contentType: "yaml" as never }, /protocol triple takes contentType json or proto, got "yaml"/);
  });

  it("gRPC needs HTTP/2; a Triple client over HTTP/1.1 is fine", () => {
    refused({ protocol: "grpc", httpVersion: "1.1" }, /gRPC needs HTTP\/2, not HTTP\/1\.1/);
    refused({ contentType: "grpc+proto", httpVersion: "1.1" }, /gRPC needs HTTP\/2/);
    accepted({ httpVersion: "1.1" });
  });

  it("compression: unknown names are refused by the core, gRPC's missing ones by the protocol", () => {
    refused({ compression: "lz4" as never }, /unknown compression "lz4"/);
    refused({ protocol: "grpc", compression: "br" }, /gRPC supports gzip and deflate compression, not "br"/);
    refused({ protocol: "grpc-web", compression: "br" }, /gRPC-Web supports gzip and deflate compression, not "br"/);
    accepted({ compression: "br" }); // Triple HTTP bodies take br; its gRPC streams go uncompressed
    accepted({ protocol: "connect", compression: "br" });
  });

  it("serialization implies gRPC; the other protocols refuse it", () => {
    accepted({ serialization: "hessian2" });
    for (const protocol of ["triple", "connect", "grpc-web"] as const) {
      refused(
        { protocol, serialization: "fastjson2" },
        new RegExp(`serialization fastjson2 is Dubbo's wrapper over gRPC; protocol must be "grpc", got "${protocol}"`),
      );
    }
    refused({ serialization: "kryo" as never }, /serialization must be "hessian2", "fastjson2" or "json", got "kryo"/);
    refused({ serialization: "hessian2", contentType: "grpc+json" }, /serialization hessian2 is sent as grpc\+proto/);
  });
});
