import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { Code } from "../../src/index.js";
import { encodeRequestWrapper } from "../../src/message/wrapper.js";
import { frame, type RawReply, rawCall } from "../grpc/raw.js";
import { ServerChild } from "../robustness/child.js";
import { assertNearBaseline, assertRefused, Bystander, sameSizeGreetMs, timedPost } from "./attack.js";

const b = (...xs: (number | string | Buffer)[]): Buffer =>
  Buffer.concat(xs.map((x) => (typeof x === "string" ? Buffer.from(x, "latin1") : Buffer.isBuffer(x) ? x : Buffer.from([x]))));
/** A hessian2 string of up to 31 characters. */
const hs = (s: string): Buffer => b(s.length, s);
/** A hessian2 int in its 5-byte form. */
const hi = (n: number): Buffer => {
  const x = Buffer.alloc(5);
  x[0] = 0x49;
  x.writeUInt32BE(n >>> 0, 1);
  return x;
};
/** A hessian2 long in its 9-byte form. */
const hl = (n: bigint): Buffer => {
  const x = Buffer.alloc(9);
  x[0] = 0x4c;
  x.writeBigInt64BE(n, 1);
  return x;
};
/** A JSONB int32 in its 5-byte form. */
const ji = (n: number): Buffer => {
  const x = Buffer.alloc(5);
  x[0] = 0x48;
  x.writeInt32BE(n, 1);
  return x;
};
/** Dubbo's fastjson2 framing: a 4-byte length, then the JSONB. */
const framed = (body: Buffer): Buffer => {
  const h = Buffer.alloc(4);
  h.writeInt32BE(body.length);
  return Buffer.concat([h, body]);
};

/** hessian-lite's `java.math.BigInteger`, field by field: `signum`, then `mag` (an untyped fixed list of ints). */
function hessianBigInteger(signum: number, words: Buffer, count: number): Buffer {
  return b(0x43, hs("java.math.BigInteger"), 0x92, hs("signum"), hs("mag"), 0x60, 0x90 + signum, 0x58, hi(count), words);
}

/** hessian-lite's `java.math.BigDecimal`: its text in `value` (chunks of 65,535 characters). */
function hessianBigDecimal(text: string): Buffer {
  const t = Buffer.from(text, "latin1");
  const parts: Buffer[] = [];
  let i = 0;
  for (; t.length - i > 0xffff; i += 0xffff) parts.push(b(0x52, 0xff, 0xff), t.subarray(i, i + 0xffff));
  parts.push(b(0x53, (t.length - i) >> 8, (t.length - i) & 0xff), t.subarray(i));
  return b(0x43, hs("java.math.BigDecimal"), 0x91, hs("value"), 0x60, ...parts);
}

/** One argument in Dubbo's TripleRequestWrapper, as one gRPC message. */
const wrapped = (serializeType: string, arg: Buffer, argType: string): Buffer =>
  frame(encodeRequestWrapper({ serializeType, args: [arg], argTypes: [argType] }));

/** A gRPC call of NumberService that must be answered within `timeoutMs` (its session is destroyed otherwise). */
async function grpcCall(url: string, method: string, message: Buffer, timeoutMs = 5_000): Promise<RawReply & { ms: number }> {
  const session = http2.connect(url);
  session.on("error", () => {});
  const t = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const reply = await Promise.race([
      rawCall(session, `/org.example.NumberService/${method}`, [message], { "content-type": "application/grpc+proto" }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${method}: no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ...reply, ms: Math.round(performance.now() - t) };
  } finally {
    clearTimeout(timer);
    session.destroy();
  }
}

/** The faster of two calls (the first may pay for warming up code paths the server has not run yet). */
async function fasterOfTwo(call: () => Promise<RawReply & { ms: number }>): Promise<RawReply & { ms: number }> {
  const [a, b] = [await call(), await call()];
  return a.ms <= b.ms ? a : b;
}

/**
 * Asserts invalid_argument with a short message matching `message`; given `baselineMs` (a
 * well-formed greet of the same size, see sameSizeGreetMs), the answer came within 10x of it. A
 * small message has no time bound of its own: grpcCall's timeout bounds it.
 */
function assertInvalid(r: RawReply & { ms: number }, message: RegExp, baselineMs?: number): void {
  const text = decodeURIComponent(r.grpcMessage ?? "");
  assert.equal(r.grpcStatus, Code.InvalidArgument, text);
  assert.match(text, message);
  assert.ok(text.length < 400, `the message echoes the number (${text.length} characters)`);
  if (baselineMs !== undefined) assertNearBaseline(r.ms, baselineMs, 10, "the refusal");
}

const DIGITS = "7".repeat(3_900_000);
const JSON_HEADERS = { "content-type": "application/json" };

/**
 * Issue 33, breaks 1 and 3: numbers converted in time that grows faster than their size. A hessian2
 * `BigInteger` was rebuilt by shifting the whole number once per word (100,000 words, 98 KiB:
 * 30.8 s of blocked event loop); a JSONB `BigDecimal` built its whole decimal text (3.9 MB: 9.6 s);
 * 3.9 M decimal digits into a `bigint` parameter cost 1–2 s in V8's BigInt (four senders cut a
 * good client to 35 %). Every big number is now measured before it is converted and refused over
 * `limits.maxNumberDigits` (4096 digits; in binary, 13,607 bits) with `invalid_argument` naming
 * the parameter, the limit, and the number's size (never its digits); words and bytes are converted
 * through hexadecimal, in linear time.
 */
describe("hostile: number conversion bombs (issue 33, breaks 1 and 3)", () => {
  let server: ServerChild;
  before(async () => {
    server = await ServerChild.start();
  });
  after(() => server?.stop());

  it("a hessian2 BigInteger of 100,000 words (98 KiB) in a hessian4 wrapper over application/grpc+proto → invalid_argument within 10x a greet of the same size; greets beside answer", async () => {
    const arg = hessianBigInteger(1, Buffer.alloc(100_000, 0x91), 100_000);
    assert.ok(arg.length < 100 * 1024);
    const bystander = new Bystander(server.url);
    const r = await fasterOfTwo(() => grpcCall(server.url, "long", wrapped("hessian4", arg, "long")));
    assertInvalid(
      r,
      /parameter #1 \(b\): a java\.math\.BigInteger of 100000 words \(3199969 bits\) is larger than this server takes \(limits\.maxNumberDigits: 4096 digits, 13607 bits\)/,
      await sameSizeGreetMs(server.url, arg.length),
    );
    await bystander.assertResponsive(3_000);
    server.assertAlive();
  });

  it("a JSONB BigDecimal with a 3.9 MB unscaled value (fastjson2 wrapper, double parameter) → invalid_argument within 10x a greet of the same size; greets beside answer", async () => {
    const arg = framed(b(0xb9, 0x00, 0xbb, ji(3_900_000), Buffer.alloc(3_900_000, 0x5a)));
    const bystander = new Bystander(server.url);
    const r = await fasterOfTwo(() => grpcCall(server.url, "ratio", wrapped("fastjson2", arg, "double")));
    assertInvalid(
      r,
      /parameter #1 \(x\): .*a BigDecimal of 3900000 bytes is larger than this server takes \(limits\.maxNumberDigits: 4096 digits, 13607 bits\)/,
      await sameSizeGreetMs(server.url, arg.length),
    );
    await bystander.assertResponsive(3_000);
  });

  it("a hessian2 BigDecimal of 3.9 M digits into a long parameter → invalid_argument naming its size", async () => {
    const r = await fasterOfTwo(() => grpcCall(server.url, "long", wrapped("hessian4", hessianBigDecimal(DIGITS), "long")));
    assertInvalid(
      r,
      /parameter #1 \(b\): a java\.math\.BigDecimal of 3900000 digits is larger than this server takes \(limits\.maxNumberDigits: 4096 digits\)/,
      await sameSizeGreetMs(server.url, DIGITS.length),
    );
  });

  it("4 senders of 3.9 M decimal digits into a bigint parameter (JSON string, text/plain) → 400 naming the limit, each within 5x as many greets of the same size; greets beside answer", async () => {
    // Before: 1–2 s of BigInt per request on the event loop, so the last of four answered after
    // 4 s or more and the greets beside waited as long as one conversion.
    const json = Buffer.from(`["${DIGITS}"]`);
    const text = Buffer.from(DIGITS);
    const bystander = new Bystander(server.url);
    const all = await Promise.all([
      timedPost(server.url, "/org.example.NumberService/long", { headers: JSON_HEADERS, body: json }, 10_000),
      timedPost(server.url, "/org.example.NumberService/long", { headers: JSON_HEADERS, body: json }, 10_000),
      timedPost(server.url, "/org.example.NumberService/long", { headers: { "content-type": "text/plain" }, body: text }, 10_000),
      timedPost(server.url, "/org.example.NumberService/long", { headers: { "content-type": "text/plain" }, body: text }, 10_000),
    ]);
    const baseline = await sameSizeGreetMs(server.url, json.length, 4);
    for (const { reply, ms } of all) {
      assertRefused(
        reply,
        400,
        "invalid_argument",
        /^parameter #1 \(b\) is a number of 3900000 digits, more than this server takes \(limits\.maxNumberDigits: 4096 digits\)/,
      );
      assert.ok(reply.text().length < 400, "the answer does not echo the number");
      assertNearBaseline(ms, baseline, 5, "4 senders of 3.9 M digits");
    }
    await bystander.assertResponsive(3_000);
  });

  it("every text path: a query value, a form field, a multipart text part, XML text and a number parameter refuse 4097 digits; 4096 digits bind", async () => {
    const over = "9".repeat(4097);
    const atLimit = "9".repeat(4096);
    const FORM = { "content-type": "application/x-www-form-urlencoded" };
    const part = (v: string) => ({
      headers: { "content-type": "multipart/form-data; boundary=xx" },
      body: `--xx\r\nContent-Disposition: form-data; name="b"\r\n\r\n${v}\r\n--xx--\r\n`,
    });
    const limit = /is a number of 4097 digits, more than this server takes \(limits\.maxNumberDigits: 4096 digits\)/;
    assertRefused((await timedPost(server.url, `/numbers/big?b=${over}`, {}, 5_000)).reply, 400, "invalid_argument", limit);
    assertRefused(
      (await timedPost(server.url, "/org.example.NumberService/long", { headers: FORM, body: `b=${over}` }, 5_000)).reply,
      400,
      "invalid_argument",
      limit,
    );
    assertRefused((await timedPost(server.url, "/org.example.NumberService/long", part(over), 5_000)).reply, 400, "invalid_argument", limit);
    assertRefused(
      (await timedPost(server.url, "/org.example.NumberService/ratio", { headers: FORM, body: `x=${over}` }, 5_000)).reply,
      400,
      "invalid_argument",
      limit,
    );
    const xml = (v: string) => ({ headers: { "content-type": "application/xml", accept: "application/json" }, body: `<entry><id>${v}</id></entry>` });
    assertRefused(
      (await timedPost(server.url, "/org.example.NumberService/entry", xml(over), 5_000)).reply,
      400,
      "invalid_argument",
      /parameter #1\.id is a number of 4097 digits/,
    );
    assert.equal((await timedPost(server.url, "/org.example.NumberService/entry", xml(atLimit), 5_000)).reply.status, 200);
    const { reply: ok } = await timedPost(server.url, `/numbers/big?b=${atLimit}`, {}, 5_000);
    assert.equal(ok.status, 200, ok.text());
    assert.equal(ok.json(), `bigint:${BigInt(atLimit).toString(16).length} hex digits`);
    const json = await timedPost(server.url, "/org.example.NumberService/long", { headers: JSON_HEADERS, body: `["-${atLimit}"]` }, 5_000);
    assert.equal(json.reply.status, 200, json.reply.text());
  });

  it("a hessian2 BigInteger and a JSONB BigInteger at the limit bind; one word or byte more is refused", async () => {
    // 13,607 bits: 425 full words and one of 7 bits (0x7f); 426 full words are over.
    const words = (first: number, n: number) => Buffer.concat([hi(first), ...Array.from({ length: n - 1 }, () => hi(0xffffffff))]);
    const at = await grpcCall(server.url, "huge", wrapped("hessian4", hessianBigInteger(1, words(0x7f, 426), 426), "java.math.BigInteger"));
    assert.equal(at.grpcStatus, 0, decodeURIComponent(at.grpcMessage ?? ""));
    const over = await grpcCall(server.url, "huge", wrapped("hessian4", hessianBigInteger(1, words(0xff, 426), 426), "java.math.BigInteger"));
    assertInvalid(over, /a java\.math\.BigInteger of 426 words \(13608 bits\) is larger than this server takes/);
    // JSONB: 1701 bytes hold 13,607 bits and the sign.
    const jsonb = (n: number) => framed(b(0xbb, ji(n), 0x7f, Buffer.alloc(n - 1, 0xff)));
    const inJsonb = await grpcCall(server.url, "huge", wrapped("fastjson2", jsonb(1701), "java.math.BigInteger"));
    assert.equal(inJsonb.grpcStatus, 0, decodeURIComponent(inJsonb.grpcMessage ?? ""));
    assertInvalid(
      await grpcCall(server.url, "huge", wrapped("fastjson2", jsonb(1702), "java.math.BigInteger")),
      /a BigInteger of 1702 bytes is larger than this server takes/,
    );
  });

  describe("limits.maxNumberDigits: 100000", () => {
    let wide: ServerChild;
    before(async () => {
      wide = await ServerChild.start({ limits: { maxNumberDigits: 100_000 } });
    });
    after(() => wide?.stop());

    it("takes 100,000 digits and refuses 100,001, over JSON and in a hessian2 BigDecimal", async () => {
      const ok = await timedPost(wide.url, "/org.example.NumberService/long", { headers: JSON_HEADERS, body: `["${"1".repeat(100_000)}"]` }, 5_000);
      assert.equal(ok.reply.status, 200, ok.reply.text());
      const over = await timedPost(wide.url, "/org.example.NumberService/long", { headers: JSON_HEADERS, body: `["${"1".repeat(100_001)}"]` }, 5_000);
      assertRefused(over.reply, 400, "invalid_argument", /100001 digits, more than this server takes \(limits\.maxNumberDigits: 100000 digits\)/);
      const r = await grpcCall(wide.url, "long", wrapped("hessian4", hessianBigDecimal("1".repeat(100_001)), "long"));
      assertInvalid(r, /BigDecimal of 100001 digits is larger than this server takes \(limits\.maxNumberDigits: 100000 digits\)/);
    });
  });
});

/**
 * Issue 33, break 7: a JSONB int64 (`0xbe`) or BigInteger (`0xbb`), or a hessian2 long past 2^53,
 * passed the converter of a `String` parameter, a `string` field of a `@JavaClass` class and a
 * `T.int32` parameter: the converter's message could not show a bigint and the call failed
 * `unknown` ("Do not know how to serialize a BigInt"). Now a Java number declared a string is its
 * decimal text (as hessian-lite's readString and fastjson2's do), a number parameter takes a value
 * that fits its declared type exactly, and anything else is `invalid_argument` naming the parameter.
 */
describe("hostile: Java numbers into other declared types (issue 33, break 7)", () => {
  let server: ServerChild;
  before(async () => {
    server = await ServerChild.start();
  });
  after(() => server?.stop());

  const LONG = 9007199254740993n; // 2^53 + 1
  const hessianLong = hl(LONG);
  const jsonbLong = framed(b(0xbe, hl(LONG).subarray(1)));
  const jsonbBig = framed(b(0xbb, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0)); // 2^64
  const answer = (r: RawReply): string => {
    assert.equal(r.grpcStatus, 0, decodeURIComponent(r.grpcMessage ?? ""));
    // The reply's hessian2 / JSONB string: its text follows a one- or two-byte header.
    return r.messages[0].payload.toString("latin1");
  };

  it("a hessian2 long, a JSONB int64 and a JSONB BigInteger into a String parameter → its decimal text", async () => {
    assert.match(answer(await grpcCall(server.url, "text", wrapped("hessian4", hessianLong, "java.lang.String"))), /string:9007199254740993/);
    assert.match(answer(await grpcCall(server.url, "text", wrapped("fastjson2", jsonbLong, "java.lang.String"))), /string:9007199254740993/);
    assert.match(answer(await grpcCall(server.url, "text", wrapped("fastjson2", jsonbBig, "java.lang.String"))), /string:18446744073709551616/);
    assert.match(answer(await grpcCall(server.url, "text", wrapped("hessian4", b(0x95), "java.lang.String"))), /string:5/, "a small int too");
  });

  it("a hessian2 long past 2^53 into a string field of a @JavaClass class → its text; into its int field → invalid_argument naming the field", async () => {
    const amount = (label: Buffer | number, count: Buffer | number) => b(0x43, hs("org.example.Amount"), 0x92, hs("label"), hs("count"), 0x60, label, count);
    assert.match(
      answer(await grpcCall(server.url, "amount", wrapped("hessian4", amount(hessianLong, 0x97), "org.example.Amount"))),
      /label string:9007199254740993, count number:7/,
    );
    const r = await grpcCall(server.url, "amount", wrapped("hessian4", amount(hs("x"), hessianLong), "org.example.Amount"));
    assertInvalid(r, /^parameter #1 \(a\)\.count must be an int32 \(an integer from -2147483648 to 2147483647\), got integer 9007199254740993$/);
  });

  it("T.int32: a long or BigInteger that fits → a number; past int32 or past 2^53 → invalid_argument naming the parameter", async () => {
    const smallBig = framed(b(0xba, 0xe7)); // BigInteger 7 (0xba: fastjson2's BC_BIGINT_LONG)
    assert.match(answer(await grpcCall(server.url, "count", wrapped("fastjson2", smallBig, "int"))), /number:7/);
    const int32 = /^parameter #1 \(n\) must be an int32 \(an integer from -2147483648 to 2147483647\), got (integer|number) \d+$/;
    assertInvalid(await grpcCall(server.url, "count", wrapped("hessian4", hessianLong, "int")), int32);
    assertInvalid(await grpcCall(server.url, "count", wrapped("fastjson2", jsonbLong, "int")), int32);
    assertInvalid(await grpcCall(server.url, "count", wrapped("fastjson2", jsonbBig, "int")), int32);
    assertInvalid(await grpcCall(server.url, "count", wrapped("hessian4", hl(1n << 33n), "int")), int32);
    // A BigInteger of two words (2^32 + 2): past int32.
    assertInvalid(await grpcCall(server.url, "count", wrapped("hessian4", hessianBigInteger(1, Buffer.concat([hi(1), hi(2)]), 2), "int")), int32);
  });

  it("a double parameter: a long within 2^53 → the number; past it → invalid_argument (declare bigint)", async () => {
    assert.match(answer(await grpcCall(server.url, "ratio", wrapped("hessian4", hl(1n << 52n), "double"))), /number:4503599627370496/);
    assertInvalid(
      await grpcCall(server.url, "ratio", wrapped("fastjson2", jsonbLong, "double")),
      /^parameter #1 \(x\) must be an integer within ±9007199254740991 \(declare the parameter bigint for larger ones\), got integer 9007199254740993$/,
    );
  });

  it("a bigint parameter still takes all of them", async () => {
    assert.match(answer(await grpcCall(server.url, "long", wrapped("hessian4", hessianLong, "long"))), /bigint:14 hex digits/);
    assert.match(answer(await grpcCall(server.url, "long", wrapped("fastjson2", jsonbBig, "long"))), /bigint:17 hex digits/);
  });
});
