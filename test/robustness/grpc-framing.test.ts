import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { gzipZeros } from "./bomb.js";
import { ServerChild, whileGreeting } from "./child.js";

interface GrpcReply {
  status: number;
  grpcStatus: number | undefined;
  grpcMessage: string;
  body: Buffer;
}

/** One gRPC request with a raw body (whatever framing the test wants), read to the trailers. */
function grpcCall(session: http2.ClientHttp2Session, path: string, body: Buffer | Buffer[], headers: Record<string, string> = {}): Promise<GrpcReply> {
  return new Promise((resolve, reject) => {
    const st = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers });
    let status = 0;
    let fromHeaders: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    st.on("response", (h) => {
      status = Number(h[":status"]);
      fromHeaders = h;
    });
    st.on("trailers", (t) => {
      trailers = t;
    });
    st.on("data", (c: Buffer) => chunks.push(c));
    st.on("end", () => {
      const t = trailers["grpc-status"] !== undefined ? trailers : fromHeaders;
      const gs = t["grpc-status"];
      resolve({
        status,
        grpcStatus: gs === undefined ? undefined : Number(gs),
        grpcMessage: decodeURIComponent(String(t["grpc-message"] ?? "")),
        body: Buffer.concat(chunks),
      });
    });
    st.on("error", reject);
    for (const b of Array.isArray(body) ? body : [body]) st.write(b);
    st.end();
  });
}

function lp(payload: Buffer, flags = 0, declared = payload.length): Buffer {
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(declared >>> 0, 1);
  return Buffer.concat([h, payload]);
}

/** GreetRequest{name} as protobuf: field 1, wire type 2. */
function greetRequest(name: string): Buffer {
  const n = Buffer.from(name);
  return Buffer.concat([Buffer.from([0x0a, n.length]), n]);
}

const GREET = "/greet.GreetService/Greet";

/** Bad gRPC framing: each gets a gRPC status (never a hang or a crash); other calls carry on. */
describe("robustness: bad gRPC framing", () => {
  let server: ServerChild;
  let session: http2.ClientHttp2Session;

  before(async () => {
    server = await ServerChild.start();
    session = http2.connect(server.url);
    session.on("error", () => {});
    const probe = await grpcCall(session, GREET, lp(greetRequest("triple")));
    if (probe.grpcStatus === 12 && /not implemented/.test(probe.grpcMessage)) {
      throw new Error("gRPC handler is still the placeholder");
    }
  });
  after(async () => {
    session?.close();
    await server.stop();
  });

  it("a well-formed gRPC Greet succeeds (baseline)", async () => {
    const r = await grpcCall(session, GREET, lp(greetRequest("triple")));
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    assert.deepEqual(r.body.subarray(5), greetRequest("triple"));
  });

  it("a truncated frame (prefix says 100 bytes, 3 arrive, stream ends) → internal", async () => {
    const r = await grpcCall(session, GREET, lp(Buffer.from([0x0a, 0x01, 0x41]), 0, 100));
    assert.equal(r.status, 200);
    assert.equal(r.grpcStatus, 13, r.grpcMessage);
    assert.match(r.grpcMessage, /truncated|middle of a message/);
  });

  it("a body that ends inside the 5-byte prefix → internal", async () => {
    const r = await grpcCall(session, GREET, Buffer.from([0, 0, 0]));
    assert.equal(r.grpcStatus, 13, r.grpcMessage);
  });

  it("a length prefix of 4 GiB − 1 → resource_exhausted at once, without waiting for the bytes", async () => {
    // An event, not a time: the request stays open (never ended, 10 of the bytes sent), so an
    // answer proves the server judged the prefix without waiting for more. The 10 s timer only
    // ends the test if none comes.
    const st = session.request({ ":method": "POST", ":path": GREET, "content-type": "application/grpc", te: "trailers" });
    st.write(lp(Buffer.alloc(10), 0, 0xffffffff));
    let timer: NodeJS.Timeout | undefined;
    const trailers = await Promise.race([
      new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        st.on("response", (h) => h["grpc-status"] !== undefined && resolve(h));
        st.on("trailers", resolve);
        st.on("error", reject);
        st.resume();
      }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer while the request stayed open")), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    assert.equal(st.writableEnded, false, "the request was still open when the answer came");
    assert.equal(Number(trailers["grpc-status"]), 8, String(trailers["grpc-message"]));
    st.close();
  });

  it("an unknown flags byte → internal", async () => {
    const r = await grpcCall(session, GREET, lp(greetRequest("triple"), 0x80));
    assert.equal(r.grpcStatus, 13, r.grpcMessage);
  });

  it("the compressed flag without grpc-encoding → internal", async () => {
    const r = await grpcCall(session, GREET, lp(greetRequest("triple"), 1));
    assert.equal(r.grpcStatus, 13, r.grpcMessage);
    assert.match(r.grpcMessage, /grpc-encoding/);
  });

  it("a payload that is not a valid protobuf message → an error status, not OK", async () => {
    const r = await grpcCall(session, GREET, lp(Buffer.from([0x0a, 0x7f, 0x01, 0xff, 0xff])));
    assert.ok(r.grpcStatus === 13 || r.grpcStatus === 3, `${r.grpcStatus} ${r.grpcMessage}`);
  });

  it("two messages on a unary method → an error status, not OK", async () => {
    const m = lp(greetRequest("triple"));
    const r = await grpcCall(session, GREET, Buffer.concat([m, m]));
    assert.notEqual(r.grpcStatus, 0, "a unary call accepted two request messages");
    assert.notEqual(r.grpcStatus, undefined);
  });

  it("no message at all on a unary method → an error status, not OK", async () => {
    const r = await grpcCall(session, GREET, Buffer.alloc(0));
    assert.notEqual(r.grpcStatus, 0);
    assert.notEqual(r.grpcStatus, undefined);
  });

  it("a gzip bomb (1 GiB of zeros in ~1 MiB) → resource_exhausted, never inflated", async () => {
    const bomb = gzipZeros(1024);
    await whileGreeting(server.url, async () => {
      const r = await grpcCall(session, GREET, lp(bomb, 1), { "grpc-encoding": "gzip" });
      assert.equal(r.grpcStatus, 8, r.grpcMessage);
    });
    await server.assertHealthy();
  });

  it("corrupt gzip data → internal", async () => {
    const r = await grpcCall(session, GREET, lp(Buffer.from("definitely not gzip"), 1), { "grpc-encoding": "gzip" });
    assert.equal(r.grpcStatus, 13, r.grpcMessage);
  });

  it("the frame split one byte per DATA frame still works (decoder state across chunks)", async () => {
    const m = lp(greetRequest("triple"));
    const r = await grpcCall(
      session,
      GREET,
      [...m].map((b) => Buffer.from([b])),
    );
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
  });

  it("the server survived every malformed message", async () => {
    await server.assertHealthy();
  });
});
