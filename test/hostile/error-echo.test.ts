import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { encodeRequestWrapper } from "../../src/message/wrapper.js";
import { clients } from "../grpc/grpc-js-client.js";
import { post1 } from "../helpers/http.js";
import { UserService } from "../java/user-service.js";
import { recordingLogger } from "../registry/services.js";
import { Bystander, timedPost } from "./attack.js";

/**
 * Issue 33, degraded: error text was echoed into `grpc-message` whole. A handler's error quoting
 * a 200 KB request value made a 200 KB header: node refused to send it (RST_STREAM
 * FRAME_SIZE_ERROR), so a grpc-js caller got `internal` "Received RST_STREAM with code 6"
 * instead of the status, and a proxy multiplexing users on one connection would have lost it
 * for all. Every error writer now cuts the message to 1 KiB (ending "…"), the gRPC details to
 * 4 KiB, and messages quoting a header value quote at most 100 characters of it.
 */

const NAME = "x".repeat(200_000);
const JSON_CT = { "content-type": "application/json" };
const BOUNDED = { timeout: 10_000 };

/** A GreetRequest `{ name }` in protobuf binary, framed for gRPC-Web. */
function grpcWebGreet(name: string): Buffer {
  const text = Buffer.from(name);
  const len: number[] = [];
  for (let n = text.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  const msg = Buffer.concat([Buffer.from([0x0a, ...len]), text]);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  return Buffer.concat([head, msg]);
}

/** The trailer frame (flag 0x80) of a gRPC-Web response body, as lower-case header lines. */
function grpcWebTrailers(body: Buffer): Record<string, string> {
  let off = 0;
  while (off + 5 <= body.length) {
    const len = body.readUInt32BE(off + 1);
    if (body[off] & 0x80) {
      const out: Record<string, string> = {};
      for (const line of body
        .subarray(off + 5, off + 5 + len)
        .toString("latin1")
        .split("\r\n")) {
        const i = line.indexOf(":");
        if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
      }
      return out;
    }
    off += 5 + len;
  }
  return {};
}

/**
 * A Dubbo TripleRequestWrapper (fastjson2) whose one argument is a JSONB ZonedDateTime (0xaa)
 * with a `zone`-long zone id: the value the hostile run sent.
 */
function zonedWrapper(zone: string): Buffer {
  const len = Buffer.alloc(4);
  len.writeInt32BE(zone.length);
  const y = 2024;
  // year int16, month … second bytes, nanos as an int32 (0x48), the zone id as a long ASCII string (0x79, its int32 length).
  return fastjson2Wrapper(
    Buffer.concat([Buffer.from([0xaa, y >> 8, y & 0xff, 2, 29, 12, 0, 0, 0x48, 0, 0, 0, 0, 0x79, 0x48]), len, Buffer.from(zone, "latin1")]),
  );
}

/** A TripleRequestWrapper (fastjson2) of one JSONB value, framed as Dubbo frames it (a 4-byte length first). */
function fastjson2Wrapper(jsonb: Buffer): Buffer {
  const framed = Buffer.alloc(4 + jsonb.length);
  framed.writeInt32BE(jsonb.length);
  jsonb.copy(framed, 4);
  return encodeRequestWrapper({ serializeType: "fastjson2", args: [framed], argTypes: ["java.lang.String"] });
}

function assertBounded(message: string, start: RegExp): void {
  assert.ok(Buffer.byteLength(message) <= 1024, `a message of ${Buffer.byteLength(message)} bytes`);
  assert.match(message, start);
  assert.ok(message.endsWith("…"), `the cut is not marked: ${message.slice(-20)}`);
}

describe("hostile: error text echoing a 200 KB request value (issue 33, degraded)", () => {
  let server: TripleServer;
  const log = recordingLogger();
  let greet: any;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new UserService()], logger: log.logger });
    await server.listen({ port: 0, host: "127.0.0.1" });
    greet = new clients.greet(`127.0.0.1:${new URL(server.url).port}`, grpc.credentials.createInsecure());
  });
  after(async () => {
    greet?.close();
    await server?.close();
  });

  const call = (method: string, name: string) =>
    new Promise<{ err: grpc.ServiceError | null; res?: { greeting: string } }>((resolve) => {
      greet[method]({ name }, (err: grpc.ServiceError | null, res?: { greeting: string }) => resolve({ err, res }));
    });

  it("gRPC (grpc-js): the caller gets the handler's status with the message cut to 1 KiB, and the next call on the channel works", BOUNDED, async () => {
    const bystander = new Bystander(server.url);
    const plain = await call("Greet", NAME);
    assert.equal(plain.err?.code, grpc.status.UNKNOWN, `${plain.err?.code} ${plain.err?.details}`);
    assertBounded(plain.err.details, /^name is not right: xxxx/);
    // A detail too large for a header (an ErrorInfo quoting the name) is left out; the status stays.
    const detailed = await call("GreetWithDetails", NAME);
    assert.equal(detailed.err?.code, grpc.status.INVALID_ARGUMENT, `${detailed.err?.code} ${detailed.err?.details}`);
    assertBounded(detailed.err.details, /^name is not right: xxxx/);
    assert.deepEqual(detailed.err.metadata.get("grpc-status-details-bin"), []);
    const next = await call("Greet", "triple");
    assert.equal(next.err, null, String(next.err));
    assert.equal(next.res?.greeting, "triple");
    await bystander.assertResponsive(2_000);
    // The log line quotes the message cut too (4 KiB), not the whole request.
    const line = log.lines.find((l) => l.includes("name is not right"));
    assert.ok(line && line.length < 4200, `log line of ${line?.length} characters`);
  });

  it(
    "gRPC (grpc-js) with Dubbo's fastjson2 wrapper: a 200 KB zone id is quoted to 100 characters in invalid_argument; the next call works",
    BOUNDED,
    async () => {
      const raw = new grpc.Client(`127.0.0.1:${new URL(server.url).port}`, grpc.credentials.createInsecure());
      try {
        const send = (payload: Buffer) =>
          new Promise<grpc.ServiceError | null>((resolve) => {
            raw.makeUnaryRequest(
              "/org.example.UserService/echo",
              (b: Buffer) => b,
              (b: Buffer) => b,
              payload,
              (err) => resolve(err),
            );
          });
        const err = await send(zonedWrapper("x".repeat(200_000)));
        assert.equal(err?.code, grpc.status.INVALID_ARGUMENT, `${err?.code} ${err?.details}`);
        assert.match(err.details, /unknown time zone "x{99}…"$/);
        assert.ok(Buffer.byteLength(err.details) < 300, err.details);
        // A short ASCII string (0x49 + its length): "ok".
        assert.equal(await send(fastjson2Wrapper(Buffer.from([0x49 + 2, 0x6f, 0x6b]))), null);
      } finally {
        raw.close();
      }
    },
  );

  it("Triple HTTP, Connect and gRPC-Web: the JSON message and the trailer frame's grpc-message are cut to 1 KiB", BOUNDED, async () => {
    const triple = await timedPost(server.url, "/greet.GreetService/Greet", { headers: JSON_CT, body: JSON.stringify({ name: NAME }) }, 5_000);
    assert.equal(triple.reply.status, 500);
    assertBounded(triple.reply.json().message, /^name is not right: xxxx/);
    assert.ok(triple.reply.body.length < 2048, `${triple.reply.body.length} bytes`);
    const connect = await timedPost(
      server.url,
      "/greet.GreetService/Greet",
      { headers: { ...JSON_CT, "connect-protocol-version": "1" }, body: JSON.stringify({ name: NAME }) },
      5_000,
    );
    assert.equal(connect.reply.json().code, "unknown");
    assertBounded(connect.reply.json().message, /^name is not right: xxxx/);
    const web = await post1(server.url, "/greet.GreetService/Greet", { headers: { "content-type": "application/grpc-web+proto" }, body: grpcWebGreet(NAME) });
    // The status comes in the trailer frame, or in the headers of a trailers-only answer.
    const t = web.headers["grpc-status"] === undefined ? grpcWebTrailers(web.body) : (web.headers as Record<string, string>);
    assert.equal(t["grpc-status"], "2");
    assertBounded(decodeURIComponent(t["grpc-message"]), /^name is not right: xxxx/);
  });

  it("a header value quoted in a refusal is quoted to 100 characters (Content-Type, connect-timeout-ms)", BOUNDED, async () => {
    const ct = `application/x-${"a".repeat(8_000)}`;
    const r = await post1(server.url, "/greet.GreetService/Greet", { headers: { "content-type": ct }, body: "{}" });
    assert.equal(r.status, 415);
    assert.match(r.json().message, /^unsupported Content-Type "application\/x-a{85}…"; supported: /);
    const t = await post1(server.url, "/greet.GreetService/Greet", {
      headers: { ...JSON_CT, "connect-protocol-version": "1", "connect-timeout-ms": "9".repeat(8_000) },
      body: '{"name":"triple"}',
    });
    assert.equal(t.status, 400);
    assert.match(t.json().message, /^protocol error: invalid connect-timeout-ms "9{99}…": expected 1 to 10 digits/);
  });
});
