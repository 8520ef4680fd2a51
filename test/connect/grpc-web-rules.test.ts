import * as assert from "node:assert/strict";
import * as http from "node:http";
import { after, before, describe, it } from "node:test";
import { decodeErrorInfo, ERROR_INFO_TYPE } from "../../samples/greet/error-info.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type CallContext, Code, createServer, Ctx, Method, Param, RpcError, Service, type TripleServer } from "../../src/index.js";
import { decodeStatusDetails } from "../../src/protocol-grpc/status.js";
import { envelope, envelopes, greetingOfProto, greetRequestProto, request1, request2 } from "./raw.js";

@Service("web.Ticks")
class Ticks {
  @Method()
  async *ticks(@Param() n: number, @Ctx() ctx: CallContext): AsyncGenerator<number> {
    ctx.responseTrailers.set("x-trail", "t");
    for (let i = 1; i <= Math.min(n, 2); i++) yield i;
    if (n > 2) throw new RpcError(Code.OutOfRange, "too far: 100%");
  }
}

/** A gRPC-Web trailer block (`name: value\r\n` lines) as an object. */
function trailerBlock(b: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of b.toString("latin1").split("\r\n")) {
    if (!line) continue;
    const i = line.indexOf(":");
    out[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  return out;
}

/**
 * Reads a gRPC-Web text response the way browser clients do, chunk by chunk as it arrives:
 * whole 4-character groups are decoded at once (each flushed write is padded base64 of its own,
 * so a group never spans two writes), the rest waits for the next chunk.
 */
function textResponse(
  url: string,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer; chunks: number }> {
  const u = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: "POST",
        agent: false,
        headers: { "content-type": "application/grpc-web-text", accept: "application/grpc-web-text", "x-grpc-web": "1", ...headers },
      },
      (res) => {
        let rest = "";
        let chunks = 0;
        const parts: Buffer[] = [];
        res.setEncoding("latin1");
        res.on("data", (c: string) => {
          chunks++;
          const s = rest + c;
          const whole = s.length - (s.length % 4);
          for (let i = 0; i < whole; i += 4) parts.push(Buffer.from(s.slice(i, i + 4), "base64"));
          rest = s.slice(whole);
        });
        res.on("end", () => {
          assert.equal(rest, "", "the text body is whole base64 groups");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(parts), chunks });
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** gRPC-Web wire rules with raw requests: text mode, trailer frames, trailers-only errors, CORS. */
describe("gRPC-Web rules, raw HTTP", () => {
  let server: TripleServer;
  let url: string;
  const origin = "http://page.example";
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new Ticks()], cors: { origins: [origin] } });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(() => server.close());

  it("text mode: base64 request, base64 response decoded chunk by chunk, trailer frame 0x80 last", async () => {
    const body = envelope(0, greetRequestProto("ada")).toString("base64");
    const r = await textResponse(url, "/greet.GreetService/GreetServerStream", body);
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^application\/grpc-web-text/);
    const frames = envelopes(r.bytes);
    assert.deepEqual(
      frames.slice(0, -1).map((f) => [f.flags, greetingOfProto(f.data)]),
      [
        [0, "hello, ada (1/3)"],
        [0, "hello, ada (2/3)"],
        [0, "hello, ada (3/3)"],
      ],
    );
    const last = frames[frames.length - 1];
    assert.equal(last.flags, 0x80);
    assert.equal(trailerBlock(last.data)["grpc-status"], "0");
    const unary = await textResponse(url, "/greet.GreetService/Greet", envelope(0, greetRequestProto("triple")).toString("base64"));
    const uf = envelopes(unary.bytes);
    assert.equal(greetingOfProto(uf[0].data), "triple");
    assert.equal(uf[1].flags, 0x80);
  });

  it("a text request body split anywhere still decodes", async () => {
    const b64 = Buffer.concat([envelope(0, greetRequestProto("p")), envelope(0, greetRequestProto("q"))]).toString("base64");
    // HTTP/2 carries client streaming; send the base64 in uneven pieces.
    const pieces: string[] = [];
    for (let i = 0, n = 3; i < b64.length; i += n, n += 2) pieces.push(b64.slice(i, i + n));
    const r = await request2(url, "/greet.GreetService/GreetClientStream", {
      headers: { "content-type": "application/grpc-web-text", "x-grpc-web": "1" },
      body: pieces,
    });
    const frames = envelopes(Buffer.from(r.text(), "base64"));
    assert.equal(greetingOfProto(frames[0].data), "p, q");
  });

  it("a text body that is not base64 fails with a message that says so", async () => {
    const r = await request1(url, "/greet.GreetService/Greet", {
      headers: { "content-type": "application/grpc-web-text", "x-grpc-web": "1" },
      body: "!!!!@@@@",
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers["grpc-status"], String(Code.Internal));
    assert.match(decodeURIComponent(String(r.headers["grpc-message"])), /not base64/);
  });

  it("an error before any message is trailers-only: grpc-status and grpc-message in the headers, no body", async () => {
    for (const send of [request1, request2]) {
      const r = await send(url, "/greet.GreetService/Greet", {
        headers: { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
        body: envelope(0, greetRequestProto("nobody")),
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers["grpc-status"], String(Code.Unknown));
      assert.equal(decodeURIComponent(String(r.headers["grpc-message"])), "name is not right: nobody");
      assert.equal(r.body.length, 0);
    }
  });

  it("details travel in grpc-status-details-bin", async () => {
    const r = await request1(url, "/greet.GreetService/GreetWithDetails", {
      headers: { "content-type": "application/grpc-web+proto" },
      body: envelope(0, greetRequestProto("nobody")),
    });
    assert.equal(r.headers["grpc-status"], String(Code.InvalidArgument));
    const status = decodeStatusDetails(Buffer.from(String(r.headers["grpc-status-details-bin"]), "base64"));
    assert.equal(status.code, Code.InvalidArgument);
    assert.equal(status.details.length, 1);
    assert.match(status.details[0].type, new RegExp(`${ERROR_INFO_TYPE}$`));
    assert.equal(decodeErrorInfo(status.details[0].value).reason, "NAME_NOT_RIGHT");
  });

  it("an error after messages: the trailer frame holds lower-case grpc-status, percent-encoded grpc-message, trailers", async () => {
    for (const send of [request1, request2]) {
      const r = await send(url, "/web.Ticks/ticks", { headers: { "content-type": "application/grpc-web+json" }, body: envelope(0, "3") });
      assert.equal(r.status, 200);
      const frames = envelopes(r.body);
      assert.deepEqual(
        frames.slice(0, -1).map((f) => JSON.parse(f.data.toString())),
        [{ value: 1 }, { value: 2 }],
      );
      const last = frames[frames.length - 1];
      assert.equal(last.flags, 0x80);
      const t = trailerBlock(last.data);
      assert.equal(t["grpc-status"], String(Code.OutOfRange));
      assert.equal(t["grpc-message"], "too far: 100%25");
      assert.equal(t["x-trail"], "t");
      for (const k of Object.keys(t)) assert.equal(k, k.toLowerCase());
    }
  });

  it("415 for application/grpc-web+xml", async () => {
    const r = await request1(url, "/greet.GreetService/Greet", { headers: { "content-type": "application/grpc-web+xml" }, body: envelope(0, "") });
    assert.equal(r.status, 415);
  });

  it("CORS: the preflight allows what browsers send; the answer exposes the grpc-* headers", async () => {
    const wanted = [
      "x-grpc-web",
      "x-user-agent",
      "grpc-timeout",
      "content-type",
      "connect-protocol-version",
      "connect-timeout-ms",
      "tri-service-timeout",
      "tri-protocol-version",
    ];
    const pre = await request1(url, "/greet.GreetService/Greet", {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": wanted.join(",") },
    });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers["access-control-allow-origin"], origin);
    const allowed = String(pre.headers["access-control-allow-headers"])
      .toLowerCase()
      .split(/\s*,\s*/);
    for (const h of wanted) assert.ok(allowed.includes(h), `${h} allowed`);
    const r = await request1(url, "/greet.GreetService/Greet", {
      headers: { origin, "content-type": "application/grpc-web+proto", "x-grpc-web": "1" },
      body: envelope(0, greetRequestProto("nobody")),
    });
    const exposed = String(r.headers["access-control-expose-headers"])
      .toLowerCase()
      .split(/\s*,\s*/);
    for (const h of ["grpc-status", "grpc-message", "grpc-status-details-bin"]) assert.ok(exposed.includes(h), `${h} exposed`);
  });
});
