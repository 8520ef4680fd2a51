import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { closeClient, Code, createClient, Field, JavaClass, type RpcError } from "../../src/index.js";
import { encodeResponseWrapper } from "../../src/message/wrapper.js";
import { writeHessian } from "../../src/serialization/hessian2/writer.js";
import { frame } from "../grpc/raw.js";
import { javaMissing, javaPeer, unhex } from "./peer.js";
import { UserService } from "./user-service.js";

/**
 * How our client reads a Dubbo Java provider's wrapped exception: Dubbo 3.3 answers a handler's
 * exception with `grpc-status` 0, a `tri-exception-code` response header (the gRPC code, 3 for a
 * business exception) and the serialized exception in the TripleResponseWrapper's `data`
 * (`ExceptionCustomizerWrapper`, `AbstractTripleClientStream`, `UnaryClientCallListener`).
 * The provider here is a raw node:http2 server sending exactly that.
 */
const b = (...xs: (number | string)[]): Buffer => Buffer.concat(xs.map((x) => (typeof x === "string" ? Buffer.from(x, "latin1") : Buffer.from([x]))));
/** A JSONB latin1 string: 0x49 + length up to 47, else 0x79 and the length as an int32. */
const str = (s: string): Buffer => (s.length <= 47 ? b(0x49 + s.length, s) : b(0x79, 0x38 + (s.length >> 8), s.length & 0xff, s));
const framed = (body: Buffer): Buffer => {
  const h = Buffer.alloc(4);
  h.writeInt32BE(body.length);
  return Buffer.concat([h, body]);
};

/**
 * An IllegalStateException as Dubbo's fastjson2 writes it (JSONB, `FieldBased`, `WriteClassName`,
 * `WriteNameAsSymbol`, `ReferenceDetection`): the class name as symbol 0, the fields in name
 * order; `cause` (the exception itself) is left out by fastjson2's FieldWriterObject; a
 * StackTraceElement array; `suppressedExceptions` is Throwable's unmodifiable empty list, typed.
 */
const FASTJSON2_EXCEPTION = Buffer.concat([
  b(0x92),
  str("java.lang.IllegalStateException"),
  b(0x00, 0xa6),
  b(0x7f),
  str("detailMessage"),
  b(0x01),
  str("no such user: 7"),
  b(0x7f),
  str("stackTrace"),
  b(0x02, 0x95, 0xa6),
  b(0x7f),
  str("declaringClass"),
  b(0x03),
  str("org.example.UserServiceImpl"),
  b(0x7f),
  str("lineNumber"),
  b(0x04, 0x2a),
  b(0x7f),
  str("methodName"),
  b(0x05),
  str("echo"),
  b(0xa5),
  b(0x7f),
  str("suppressedExceptions"),
  b(0x06, 0x92),
  str("java.util.Collections$UnmodifiableRandomAccessList"),
  b(0x07, 0x94),
  b(0xa5),
]);

/** A business exception class whose serialized form has no stackTrace: only the header tells it from a result. */
@JavaClass("org.example.BizException")
class BizException {
  @Field() detailMessage!: string;
}

interface Reply {
  data: Buffer;
  exceptionCode?: string;
}

describe("a Java provider's wrapped exceptions (grpc-status 0, tri-exception-code, the exception in data)", () => {
  let server: http2.Http2Server;
  let url: string;
  let reply: Reply;
  before(async () => {
    server = http2.createServer();
    server.on("stream", (stream) => {
      stream.resume();
      stream.on("end", () => {
        const headers: http2.OutgoingHttpHeaders = { ":status": 200, "content-type": "application/grpc+proto" };
        if (reply.exceptionCode !== undefined) headers["tri-exception-code"] = reply.exceptionCode;
        stream.respond(headers, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end(frame(reply.data));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const call = async (serialization: "hessian2" | "fastjson2", r: Reply): Promise<unknown> => {
    reply = r;
    const client = createClient(UserService, { providers: [url], serialization, retries: 0 });
    try {
      return await client.echo("x");
    } finally {
      closeClient(client);
    }
  };
  const isJava = (cls: string, msg: string) => (e: RpcError) => {
    assert.equal(e.code, Code.Unknown);
    assert.equal(e.message, `${cls}: ${msg}`);
    assert.equal(e.rawMessage, msg);
    assert.equal((e.cause as { javaClass: string }).javaClass, cls);
    return true;
  };

  it("fastjson2: Dubbo's field-based JSONB exception becomes an RpcError, with or without the header", async () => {
    const data = encodeResponseWrapper({ serializeType: "fastjson2", data: framed(FASTJSON2_EXCEPTION), type: "java.lang.Exception" });
    await assert.rejects(call("fastjson2", { data, exceptionCode: "3" }), isJava("java.lang.IllegalStateException", "no such user: 7"));
    await assert.rejects(call("fastjson2", { data }), isJava("java.lang.IllegalStateException", "no such user: 7"));
  });

  it("fastjson2: a java.lang exception written by its simple name (as fastjson2 writes it) gets its full name", async () => {
    const simple = Buffer.concat([b(0x92), str("IllegalStateException"), FASTJSON2_EXCEPTION.subarray(2 + "java.lang.IllegalStateException".length)]);
    const data = encodeResponseWrapper({ serializeType: "fastjson2", data: framed(simple), type: "java.lang.Exception" });
    await assert.rejects(call("fastjson2", { data, exceptionCode: "3" }), isJava("java.lang.IllegalStateException", "no such user: 7"));
  });

  it("hessian2: Caucho's serialized exception with the header", { skip: javaMissing() }, async () => {
    const [line] = javaPeer(["exception"]);
    await assert.rejects(call("hessian2", { data: unhex(line), exceptionCode: "3" }), isJava("java.lang.IllegalStateException", "no such user: 7"));
  });

  it("the header marks an exception of any shape; without it the same object is a result that does not match", async () => {
    const biz = Object.assign(new BizException(), { detailMessage: "out of stock" });
    const data = encodeResponseWrapper({ serializeType: "hessian4", data: writeHessian(biz), type: "java.lang.Exception" });
    await assert.rejects(call("hessian2", { data, exceptionCode: "3" }), isJava("org.example.BizException", "out of stock"));
    await assert.rejects(call("hessian2", { data }), (e: RpcError) => e.code === Code.Internal && /does not match the declared result/.test(e.message));
    // tri-exception-code 0 is Dubbo's "no exception".
    await assert.rejects(call("hessian2", { data, exceptionCode: "0" }), (e: RpcError) => e.code === Code.Internal);
    // A normal answer is still a value.
    const ok = encodeResponseWrapper({ serializeType: "hessian4", data: writeHessian("fine"), type: "java.lang.String" });
    assert.equal(await call("hessian2", { data: ok }), "fine");
  });

  it("an answer is read in the serialization its wrapper names, whatever the request's (Dubbo 3.3.1 swaps them under load)", async () => {
    const fastjson2 = encodeResponseWrapper({ serializeType: "fastjson2", data: framed(str("fine")), type: "java.lang.String" });
    assert.equal(await call("hessian2", { data: fastjson2 }), "fine");
    const hessian = encodeResponseWrapper({ serializeType: "hessian4", data: writeHessian("fine"), type: "java.lang.String" });
    assert.equal(await call("fastjson2", { data: hessian }), "fine");
    // Named one, written in the other (Dubbo reads its field twice): read in the one that reads.
    const mislabelled = encodeResponseWrapper({ serializeType: "hessian4", data: framed(str("fine")), type: "java.lang.String" });
    assert.equal(await call("hessian2", { data: mislabelled }), "fine");
    // Neither: the first error is the answer's.
    const garbage = encodeResponseWrapper({ serializeType: "hessian4", data: Buffer.from([0x43]), type: "java.lang.String" });
    await assert.rejects(
      call("hessian2", { data: garbage }),
      (e: RpcError) => e.code === Code.Internal && /invalid TripleResponseWrapper \(hessian2\) response: .*hessian2/.test(e.message),
    );
  });
});
