import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { decodeErrorInfo, ERROR_INFO_TYPE } from "../../samples/greet/error-info.js";
import { GREET_CACHE_CONTROL, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type CallContext, Code, createServer, Ctx, Method, Param, RpcError, Service, type TripleServer } from "../../src/index.js";
import { JSON_HEADERS, post1 } from "../helpers/http.js";
import { envelope, envelopes, greetingOfProto, greetRequestProto, payload, request1, request2 } from "./raw.js";

/** Fails with any code, sets headers and trailers, and streams with trailers or a late error. */
@Service("rules.Probe")
class Probe {
  @Method()
  async fail(@Param() code: number): Promise<string> {
    throw new RpcError(code as Code, `failed with ${code}`);
  }

  @Method()
  async trailers(@Param() s: string, @Ctx() ctx: CallContext): Promise<string> {
    ctx.responseHeaders.set("x-head", "h");
    ctx.responseTrailers.set("x-trail", "t");
    return s;
  }

  @Method()
  async *ticks(@Param() n: number, @Ctx() ctx: CallContext): AsyncGenerator<number> {
    ctx.responseTrailers.set("x-trail", "t");
    for (let i = 1; i <= Math.min(n, 2); i++) yield i;
    if (n > 2) throw new RpcError(Code.OutOfRange, "too far");
  }
}

const CONNECT_JSON = { "content-type": "application/json", "connect-protocol-version": "1" };
const STREAM_JSON = { "content-type": "application/connect+json", "connect-protocol-version": "1" };

/** Connect's code → HTTP status table (connectrpc.com/docs/protocol). */
const HTTP_OF: Record<number, [string, number]> = {
  1: ["canceled", 499],
  2: ["unknown", 500],
  3: ["invalid_argument", 400],
  4: ["deadline_exceeded", 504],
  5: ["not_found", 404],
  6: ["already_exists", 409],
  7: ["permission_denied", 403],
  8: ["resource_exhausted", 429],
  9: ["failed_precondition", 400],
  10: ["aborted", 409],
  11: ["out_of_range", 400],
  12: ["unimplemented", 501],
  13: ["internal", 500],
  14: ["unavailable", 503],
  15: ["data_loss", 500],
  16: ["unauthenticated", 401],
};

function endStream(body: Buffer): any {
  const all = envelopes(body);
  const last = all[all.length - 1];
  assert.equal(last.flags & 0x02, 0x02, "the last envelope is the end-stream message");
  assert.ok(
    all.slice(0, -1).every((e) => (e.flags & 0x02) === 0),
    "only the last envelope ends the stream",
  );
  return JSON.parse(payload(last).toString());
}

function messages(body: Buffer): any[] {
  return envelopes(body)
    .filter((e) => (e.flags & 0x02) === 0)
    .map((e) => JSON.parse(payload(e).toString()));
}

/** Connect protocol rules checked with raw node:http / node:http2 requests (no client library). */
describe("Connect protocol rules, raw HTTP", () => {
  let server: TripleServer;
  let url: string;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new Probe()] });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(() => server.close());

  describe("unary", () => {
    it("JSON and proto succeed with the request's Content-Type, on HTTP/1.1 and HTTP/2", async () => {
      for (const send of [request1, request2]) {
        const j = await send(url, "/greet.GreetService/Greet", { headers: CONNECT_JSON, body: '{"name":"triple"}' });
        assert.equal(j.status, 200);
        assert.match(String(j.headers["content-type"]), /^application\/json/);
        assert.deepEqual(j.json(), { greeting: "triple" });
        const p = await send(url, "/greet.GreetService/Greet", {
          headers: { "content-type": "application/proto", "connect-protocol-version": "1" },
          body: greetRequestProto("triple"),
        });
        assert.equal(p.status, 200);
        assert.equal(p.headers["content-type"], "application/proto");
        assert.equal(greetingOfProto(p.body), "triple");
      }
    });

    it("connect-timeout-ms is enforced: deadline_exceeded, HTTP 504", async () => {
      for (const send of [request1, request2]) {
        const started = Date.now();
        const r = await send(url, "/greet.GreetService/GreetSlowly", {
          headers: { ...CONNECT_JSON, "connect-timeout-ms": "150" },
          body: '{"name":"s","delayMs":5000}',
        });
        assert.equal(r.status, 504);
        assert.equal(r.headers["content-type"], "application/json");
        assert.equal(r.json().code, "deadline_exceeded");
        // Before the handler's own 5 s (less a margin): the server gave up at the deadline
        // (one-sided, generous: a loaded machine only delays the answer).
        assert.ok(Date.now() - started < 4900, `the server gave up at the deadline, not the handler's end: ${Date.now() - started} ms`);
      }
    });

    it("a malformed connect-timeout-ms is invalid_argument, HTTP 400", async () => {
      for (const v of ["soon", "12345678901", "-1", "1.5"]) {
        const r = await post1(url, "/greet.GreetService/Greet", { headers: { ...CONNECT_JSON, "connect-timeout-ms": v }, body: '{"name":"triple"}' });
        assert.equal(r.status, 400, v);
        assert.equal(r.json().code, "invalid_argument");
      }
    });

    it("the error JSON: {code, message, details: [{type, value}]}, application/json whatever the codec", async () => {
      const r = await post1(url, "/greet.GreetService/GreetWithDetails", {
        headers: { "content-type": "application/proto", "connect-protocol-version": "1" },
        body: greetRequestProto("nobody"),
      });
      assert.equal(r.status, 400);
      assert.equal(r.headers["content-type"], "application/json");
      const body = r.json();
      assert.deepEqual(Object.keys(body).sort(), ["code", "details", "message"]);
      assert.equal(body.code, "invalid_argument");
      assert.equal(body.message, "name is not right: nobody");
      assert.equal(body.details.length, 1);
      assert.equal(body.details[0].type, ERROR_INFO_TYPE);
      assert.doesNotMatch(body.details[0].value, /=/, "base64 without padding");
      assert.equal(decodeErrorInfo(Buffer.from(body.details[0].value, "base64")).reason, "NAME_NOT_RIGHT");
      // Without details there is no `details` key.
      const plain = await post1(url, "/greet.GreetService/Greet", { headers: CONNECT_JSON, body: '{"name":"nobody"}' });
      assert.equal(plain.status, 500);
      assert.deepEqual(plain.json(), { code: "unknown", message: "name is not right: nobody" });
    });

    it("Connect's code → HTTP status table", async () => {
      for (const [code, [name, status]] of Object.entries(HTTP_OF)) {
        const r = await post1(url, "/rules.Probe/fail", { headers: CONNECT_JSON, body: code });
        assert.equal(r.status, status, name);
        assert.deepEqual(r.json(), { code: name, message: `failed with ${code}` });
      }
    });

    it("a body that does not decode is 400 invalid_argument, in binary and in JSON", async () => {
      const bin = await post1(url, "/greet.GreetService/Greet", {
        headers: { "content-type": "application/proto", "connect-protocol-version": "1" },
        body: Buffer.from([0x0a, 0x7f, 0x61]),
      });
      assert.equal(bin.status, 400);
      assert.equal(bin.json().code, "invalid_argument");
      const json = await post1(url, "/greet.GreetService/Greet", { headers: CONNECT_JSON, body: '{"name":' });
      assert.equal(json.status, 400);
      assert.equal(json.json().code, "invalid_argument");
    });

    it("an unknown method or service is 404 unimplemented", async () => {
      for (const path of ["/greet.GreetService/Nope", "/nope.Service/Greet"]) {
        const r = await post1(url, path, { headers: CONNECT_JSON, body: "{}" });
        assert.equal(r.status, 404, path);
        assert.equal(r.json().code, "unimplemented");
      }
    });

    it("trailers travel as trailer- headers; headers as headers", async () => {
      const r = await post1(url, "/rules.Probe/trailers", { headers: CONNECT_JSON, body: '"x"' });
      assert.equal(r.status, 200);
      assert.equal(r.headers["x-head"], "h");
      assert.equal(r.headers["trailer-x-trail"], "t");
      assert.equal(r.headers["x-trail"], undefined);
    });

    it("gzip request and response bodies (content-encoding / accept-encoding)", async () => {
      const name = "n".repeat(3000);
      const r = await post1(url, "/greet.GreetService/GreetCached", {
        headers: { ...CONNECT_JSON, "content-encoding": "gzip", "accept-encoding": "gzip" },
        body: gzipSync(JSON.stringify({ name })),
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers["content-encoding"], "gzip");
      const { gunzipSync } = await import("node:zlib");
      assert.equal(JSON.parse(gunzipSync(r.body).toString()).greeting, `hello, ${name}`);
      const bad = await post1(url, "/greet.GreetService/Greet", { headers: { ...CONNECT_JSON, "content-encoding": "zstd-x" }, body: "{}" });
      assert.equal(bad.json().code, "unimplemented");
    });

    it("415 for a content type Connect does not know", async () => {
      const r = await post1(url, "/greet.GreetService/Greet", { headers: { "content-type": "text/plain", "connect-protocol-version": "1" }, body: "x" });
      assert.equal(r.status, 415);
      const s = await post1(url, "/greet.GreetService/GreetServerStream", {
        headers: { "content-type": "application/connect+xml", "connect-protocol-version": "1" },
        body: envelope(0, "x"),
      });
      assert.equal(s.status, 415);
    });
  });

  describe("GET", () => {
    it("a method with side effects: 405 with Allow: POST", async () => {
      const r = await request1(url, "/greet.GreetService/Greet?connect=v1&encoding=json&message=%7B%7D", { method: "GET" });
      assert.equal(r.status, 405);
      assert.equal(r.headers.allow, "POST");
    });

    it("encoding=json with a percent-encoded message; Cache-Control set by the method", async () => {
      const message = encodeURIComponent(JSON.stringify({ name: "a b/ü?&" }));
      const r = await request1(url, `/greet.GreetService/GreetCached?connect=v1&encoding=json&message=${message}`, { method: "GET" });
      assert.equal(r.status, 200);
      assert.equal(r.headers["cache-control"], GREET_CACHE_CONTROL);
      assert.match(String(r.headers["content-type"]), /^application\/json/);
      assert.deepEqual(r.json(), { greeting: "hello, a b/ü?&" });
    });

    it("encoding=proto&base64=1 (URL-safe, unpadded), over HTTP/2 too", async () => {
      const b64 = greetRequestProto("bin?>").toString("base64url");
      for (const send of [request1, request2]) {
        const r = await send(url, `/greet.GreetService/GreetCached?message=${b64}&base64=1&encoding=proto&connect=v1`, { method: "GET" });
        assert.equal(r.status, 200);
        assert.equal(r.headers["content-type"], "application/proto");
        assert.equal(r.headers["cache-control"], GREET_CACHE_CONTROL);
        assert.equal(greetingOfProto(r.body), "hello, bin?>");
      }
    });

    it("compression=gzip (base64 of the gzipped message)", async () => {
      const b64 = gzipSync(JSON.stringify({ name: "zipped" })).toString("base64url");
      const r = await request1(url, `/greet.GreetService/GreetCached?connect=v1&encoding=json&base64=1&compression=gzip&message=${b64}`, { method: "GET" });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json(), { greeting: "hello, zipped" });
    });

    it("an unknown encoding is 415", async () => {
      const r = await request1(url, "/greet.GreetService/GreetCached?connect=v1&encoding=xml&message=x", { method: "GET" });
      assert.equal(r.status, 415);
    });
  });

  describe("streams", () => {
    it("server streaming over HTTP/1.1 and HTTP/2: messages, then an end-stream {} ", async () => {
      for (const send of [request1, request2]) {
        const r = await send(url, "/greet.GreetService/GreetServerStream", { headers: STREAM_JSON, body: envelope(0, '{"name":"ada"}') });
        assert.equal(r.status, 200);
        assert.equal(r.headers["content-type"], "application/connect+json");
        assert.deepEqual(
          messages(r.body).map((m) => m.greeting),
          ["hello, ada (1/3)", "hello, ada (2/3)", "hello, ada (3/3)"],
        );
        assert.deepEqual(endStream(r.body), {});
      }
    });

    it("the end-stream carries the trailers as metadata, and the error after messages (HTTP 200)", async () => {
      const ok = await request1(url, "/rules.Probe/ticks", { headers: STREAM_JSON, body: envelope(0, "1") });
      assert.equal(ok.status, 200);
      // An IDL-less method's messages are ProtoJSON of its derived response message.
      assert.deepEqual(messages(ok.body), [{ value: 1 }]);
      assert.deepEqual(endStream(ok.body), { metadata: { "x-trail": ["t"] } });
      const bad = await request1(url, "/rules.Probe/ticks", { headers: STREAM_JSON, body: envelope(0, "3") });
      assert.equal(bad.status, 200);
      assert.deepEqual(messages(bad.body), [{ value: 1 }, { value: 2 }]);
      assert.deepEqual(endStream(bad.body), { error: { code: "out_of_range", message: "too far" }, metadata: { "x-trail": ["t"] } });
    });

    it("client and bidi streaming over HTTP/2", async () => {
      const body = Buffer.concat([envelope(0, '{"name":"a"}'), envelope(0, '{"name":"b"}')]);
      const c = await request2(url, "/greet.GreetService/GreetClientStream", { headers: STREAM_JSON, body });
      assert.deepEqual(messages(c.body), [{ greeting: "a, b" }]);
      assert.deepEqual(endStream(c.body), {});
      const b = await request2(url, "/greet.GreetService/GreetStream", { headers: STREAM_JSON, body });
      assert.deepEqual(messages(b.body), [{ greeting: "a" }, { greeting: "b" }]);
    });

    it("client streaming works over HTTP/1.1; bidi there is 505 saying HTTP/2 is needed", async () => {
      const body = Buffer.concat([envelope(0, '{"name":"a"}'), envelope(0, '{"name":"b"}')]);
      const c = await request1(url, "/greet.GreetService/GreetClientStream", { headers: STREAM_JSON, body });
      assert.deepEqual(messages(c.body), [{ greeting: "a, b" }]);
      const b = await request1(url, "/greet.GreetService/GreetStream", { headers: STREAM_JSON, body });
      assert.equal(b.status, 505);
      assert.equal(b.json().code, "unimplemented");
      assert.match(b.json().message, /HTTP\/2/);
    });

    it("connect-timeout-ms on a stream: deadline_exceeded in the end-stream", async () => {
      const r = await request2(url, "/greet.GreetService/GreetClientStream", {
        headers: { ...STREAM_JSON, "connect-timeout-ms": "150" },
        body: envelope(0, '{"name":"a"}'),
        open: true,
      });
      assert.equal(r.status, 200);
      assert.equal(endStream(r.body).error.code, "deadline_exceeded");
      const bad = await request1(url, "/greet.GreetService/GreetServerStream", {
        headers: { ...STREAM_JSON, "connect-timeout-ms": "x" },
        body: envelope(0, "{}"),
      });
      assert.equal(bad.status, 200);
      assert.equal(endStream(bad.body).error.code, "invalid_argument");
    });

    it("compressed envelopes (flag 0x01) with connect-content-encoding: gzip, both ways", async () => {
      // Large enough to be worth compressing (small messages go out as they are, flag 0).
      const a = "a".repeat(1500);
      const body = Buffer.concat([envelope(1, gzipSync(JSON.stringify({ name: a }))), envelope(1, gzipSync('{"name":"b"}'))]);
      const r = await request2(url, "/greet.GreetService/GreetClientStream", {
        headers: { ...STREAM_JSON, "connect-content-encoding": "gzip", "connect-accept-encoding": "gzip" },
        body,
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers["connect-content-encoding"], "gzip");
      const all = envelopes(r.body);
      assert.equal(all[0].flags, 0x01, "the response message is compressed");
      assert.deepEqual(messages(r.body), [{ greeting: `${a}, b` }]);
      assert.deepEqual(endStream(r.body), {});
    });

    it("a compressed flag without an encoding fails the stream (internal)", async () => {
      const r = await request2(url, "/greet.GreetService/GreetClientStream", { headers: STREAM_JSON, body: envelope(1, gzipSync('{"name":"a"}')) });
      assert.equal(r.status, 200);
      assert.equal(endStream(r.body).error.code, "internal");
    });
  });

  describe("the Triple HTTP error body gains details", () => {
    it("{status, message, code, details} when the error carries details; no details key otherwise", async () => {
      const r = await post1(url, "/greet.GreetService/GreetWithDetails", { headers: JSON_HEADERS, body: '{"name":"nobody"}' });
      assert.equal(r.status, 400);
      const body = r.json();
      assert.equal(body.status, 40);
      assert.equal(body.message, "name is not right: nobody");
      assert.equal(body.code, "invalid_argument");
      assert.equal(body.details.length, 1);
      assert.equal(body.details[0].type, ERROR_INFO_TYPE);
      assert.deepEqual(decodeErrorInfo(Buffer.from(body.details[0].value, "base64")).metadata, { name: "nobody", accepted: "triple" });
      const plain = await post1(url, "/greet.GreetService/Greet", { headers: JSON_HEADERS, body: '{"name":"nobody"}' });
      assert.deepEqual(plain.json(), { status: 70, message: "name is not right: nobody", code: "unknown" });
    });
  });

  describe("dubbo-js's Triple dialect of the Connect protocol", () => {
    const TRI_STREAM = { "content-type": "application/connect+json", "tri-protocol-version": "1.0.0" };

    it("an application/connect+json stream with tri-protocol-version and tri-service-timeout", async () => {
      const r = await request1(url, "/greet.GreetService/GreetServerStream", {
        headers: { ...TRI_STREAM, "tri-service-timeout": "5000" },
        body: envelope(0, '{"name":"tri"}'),
      });
      assert.equal(r.status, 200);
      assert.equal(messages(r.body).length, 3);
      assert.deepEqual(endStream(r.body), {});
    });

    it("tri-service-timeout is enforced; the end-stream error has dubbo-js's numeric status", async () => {
      const r = await request2(url, "/greet.GreetService/GreetClientStream", {
        headers: { ...TRI_STREAM, "tri-service-timeout": "150" },
        body: envelope(0, '{"name":"a"}'),
        open: true,
      });
      assert.equal(r.status, 200);
      const { error } = endStream(r.body);
      assert.equal(error.status, Code.DeadlineExceeded);
      assert.equal(error.code, "deadline_exceeded");
    });

    it("GET ?triple=v1.0.0&encoding=json&message=…, and its errors in dubbo-js's shape", async () => {
      const message = encodeURIComponent('{"name":"tri"}');
      const r = await request1(url, `/greet.GreetService/GreetCached?triple=v1.0.0&encoding=json&message=${message}`, { method: "GET" });
      assert.equal(r.status, 200);
      assert.equal(r.headers["cache-control"], GREET_CACHE_CONTROL);
      assert.deepEqual(r.json(), { greeting: "hello, tri" });
      // A binary message must be base64: invalid_argument.
      const bad = await request1(url, "/greet.GreetService/GreetCached?triple=v1.0.0&encoding=proto&message=abc", { method: "GET" });
      assert.equal(bad.status, 400);
      assert.equal(bad.json().status, Code.InvalidArgument);
    });
  });
});
