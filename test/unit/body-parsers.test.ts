import * as assert from "node:assert/strict";
import * as zlib from "node:zlib";
import { describe, it } from "node:test";
import { encodeText } from "../../src/codec/charset.js";
import { parseForm } from "../../src/codec/form-codec.js";
import { parseJson } from "../../src/codec/json.js";
import { parseXml } from "../../src/codec/xml-codec.js";
import { checkXmlShape, type XmlShapeLimits } from "../../src/codec/xml-scan.js";
import { Code } from "../../src/protocol/code.js";
import { boundedDecompressStream, HTTP_COMPRESSIONS } from "../../src/protocol/compression.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import { DEFAULT_LIMITS } from "../../src/runtime/limits.js";
import { assertWithin } from "../helpers/timing.js";

/** Asserts `fn` throws an RpcError with this code, HTTP status, and a message matching `message`. */
function assertLimit(fn: () => unknown, code: Code, httpStatus: number, message: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof RpcError, String(e));
    assert.equal(e.code, code);
    // 400 is invalid_argument's own status (the status table); 413 is set explicitly.
    assert.equal(e.httpStatus ?? 400, httpStatus);
    assert.match(e.message, message);
    return true;
  });
}

const form = (s: string, maxFieldBytes = 1 << 20, maxFields?: number) => parseForm(Buffer.from(s), "utf-8", maxFieldBytes, maxFields);

describe("parseForm", () => {
  it("decodes pairs in order: +, %XX, a bare %, missing =, empty fields, = in values", () => {
    assert.deepEqual(form("a=1&b=x+y%20z&&c&=v&d=%zz&%E2%82%AC=%e2%82%ac&e=a=b"), [
      { name: "a", value: "1" },
      { name: "b", value: "x y z" },
      { name: "c", value: "" },
      { name: "", value: "v" },
      { name: "d", value: "%zz" },
      { name: "€", value: "€" },
      { name: "e", value: "a=b" },
    ]);
    assert.deepEqual(form(""), []);
    assert.deepEqual(form("&&&"), []);
  });

  it("decodes in the request's charset", () => {
    const body = Buffer.concat([Buffer.from("n="), encodeText("ü", "iso-8859-1"), Buffer.from("&m=%FC")]);
    assert.deepEqual(parseForm(body, "iso-8859-1", 100), [
      { name: "n", value: "ü" },
      { name: "m", value: "ü" },
    ]);
  });

  it("is linear: 1M fields without `=` parse in about the time of 1M fields with one (the old parser searched to the end for each)", async () => {
    const bare = Buffer.from("a&".repeat(1_000_000));
    const named = Buffer.from("a=&".repeat(1_000_000));
    // A ratio to the same number of fields with `=`, timed back to back in this test (0.6 s
    // against 0.4 s here): the quadratic form took ~15 s for the bare fields (40x at 100k fields
    // already, and 10x more at 1M), linear in the named ones.
    await assertWithin(
      5,
      "1M fields without `=` against 1M with",
      () => assert.equal(parseForm(bare, "utf-8", 1 << 20).length, 1_000_000),
      () => parseForm(named, "utf-8", 1 << 20),
      2,
    );
  });

  it("maxFormFields: exactly the limit is accepted, one more → 413 resource_exhausted naming it", () => {
    const at = Array.from({ length: 1000 }, (_, i) => `f${i}=1`).join("&");
    assert.equal(form(at, 1 << 20, 1000).length, 1000);
    assertLimit(() => form(`${at}&one=more`, 1 << 20, 1000), Code.ResourceExhausted, 413, /more than 1000 fields \(limits\.maxFormFields\)/);
    // Empty fields (`&&`) are not fields.
    assert.equal(form(`${at}&&&`, 1 << 20, 1000).length, 1000);
    assert.equal(DEFAULT_LIMITS.maxFormFields, 1000);
  });

  it("maxFieldBytes bounds decoded values, escaped or not → 413 naming it", () => {
    assert.equal(form(`v=${"x".repeat(10)}`, 10)[0].value.length, 10);
    assertLimit(() => form(`v=${"x".repeat(11)}`, 10), Code.ResourceExhausted, 413, /"v" is larger than 10 bytes \(limits\.maxFieldBytes\)/);
    assert.equal(form(`v=${"%41".repeat(10)}`, 10)[0].value, "A".repeat(10));
    assertLimit(() => form(`v=${"%41".repeat(11)}`, 10), Code.ResourceExhausted, 413, /maxFieldBytes/);
  });
});

const XML_LIMITS: XmlShapeLimits = { maxXmlDepth: 4, maxXmlElements: 10, maxXmlAttributes: 6, maxXmlElementAttributes: 3 };

describe("checkXmlShape (the XML pre-scan)", () => {
  it("counts elements, attributes and depth; comments, CDATA, PIs and quoted `=`/`>` do not count", () => {
    checkXmlShape(
      '<?xml version="1.0"?><r a="1" b=\'x=>y\' c="3"><!-- <x a="1" b="2" c="3" d="4"> --><s><t><u/></t></s><![CDATA[<x a=1 b=2 c=3 d=4>]]></r>',
      XML_LIMITS,
    );
  });

  it("attributes on one element over the limit → 413 naming maxXmlElementAttributes", () => {
    assertLimit(
      () => checkXmlShape('<r a="1" b="2" c="3" d="4"/>', XML_LIMITS),
      Code.ResourceExhausted,
      413,
      /more than 3 attributes \(limits\.maxXmlElementAttributes\)/,
    );
  });

  it("attributes in the document over the limit → 413 naming maxXmlAttributes", () => {
    assertLimit(
      () => checkXmlShape('<r a="1" b="2"><s a="1" b="2"/><s a="1" b="2" c="3"/></r>', XML_LIMITS),
      Code.ResourceExhausted,
      413,
      /more than 6 attributes \(limits\.maxXmlAttributes\)/,
    );
  });

  it("elements over the limit → 413 naming maxXmlElements", () => {
    assertLimit(
      () => checkXmlShape(`<r>${"<x/>".repeat(10)}</r>`, XML_LIMITS),
      Code.ResourceExhausted,
      413,
      /more than 10 elements \(limits\.maxXmlElements\)/,
    );
  });

  it("depth over the limit → 400 naming maxXmlDepth; siblings do not add depth", () => {
    checkXmlShape("<a><b><c><d/></c></b></a>", XML_LIMITS);
    checkXmlShape("<a><b/><b></b><b><c><d></d></c></b></a>", XML_LIMITS);
    assertLimit(
      () => checkXmlShape("<a><b><c><d><e/></d></c></b></a>", XML_LIMITS),
      Code.InvalidArgument,
      400,
      /deeper than 4 elements \(limits\.maxXmlDepth\)/,
    );
  });

  it("runs before the parser: a 200k-attribute element is refused in a scan, not parsed", async () => {
    let s = "<r";
    for (let i = 0; i < 200_000; i++) s += ` a${i}="v"`;
    s += "/>";
    assertLimit(() => parseXml(s, DEFAULT_LIMITS), Code.ResourceExhausted, 413, /maxXmlElementAttributes/);
    // The refusal costs at most a scan: timed against a full scan of the same document (limits
    // raised so nothing is refused); parsing the 200k attributes costs over 10x that scan.
    const unbounded = { ...DEFAULT_LIMITS, maxXmlAttributes: 1e9, maxXmlElementAttributes: 1e9 };
    await assertWithin(
      3,
      "the refusal against a scan",
      () => assert.throws(() => parseXml(s, DEFAULT_LIMITS)),
      () => checkXmlShape(s, unbounded),
    );
  });

  it("maxXmlBytes: a document of exactly the limit parses; one byte more → 413 naming it; UTF-8 bytes count, not characters", () => {
    const limits = { ...DEFAULT_LIMITS, maxXmlBytes: 64 };
    const doc = (n: number, ch = "x") => `<r><t>${ch.repeat(n)}</t></r>`; // 14 bytes of markup
    assert.deepEqual(parseXml(doc(50), limits), { t: "x".repeat(50) });
    assertLimit(() => parseXml(doc(51), limits), Code.ResourceExhausted, 413, /XML document is larger than 64 bytes \(limits\.maxXmlBytes\)/);
    // 25 "é" are 25 characters but 50 bytes: 64 in all, within; 26 are 66 bytes.
    assert.deepEqual(parseXml(doc(25, "é"), limits), { t: "é".repeat(25) });
    assertLimit(() => parseXml(doc(26, "é"), limits), Code.ResourceExhausted, 413, /maxXmlBytes/);
  });

  it("maxXmlBytes is checked after the shape: a wide document still names the shape limit; the default is 1 MiB", () => {
    assert.equal(DEFAULT_LIMITS.maxXmlBytes, 1024 * 1024);
    const wide = `<r${' a="1"'.repeat(300)}/>`;
    assertLimit(() => parseXml(wide, { ...DEFAULT_LIMITS, maxXmlBytes: 16 }), Code.ResourceExhausted, 413, /maxXmlElementAttributes/);
  });

  it("unterminated quotes, comments and tags end the scan (the validator reports them after)", () => {
    for (const s of ['<r a="1', "<r><!-- x", "<r><![CDATA[ x", "<r", "<?x", "</r", "<!x"]) checkXmlShape(s, XML_LIMITS);
  });
});

describe("parseJson: forbidden keys are judged by the decoded key", () => {
  it("\\u-escaped __proto__ / constructor / prototype keys are dropped, at any depth", () => {
    const v = parseJson(
      String.raw`{"\u005f\u005fproto__":{"polluted":true},"constr\u0075ctor":1,"pr\u006ftotype":2,"a":{"\u005F_proto__":{"x":1},"b":1}}`,
    ) as Record<string, unknown>;
    assert.deepEqual(Object.keys(v), ["a"]);
    assert.deepEqual(Object.keys(v.a as object), ["b"]);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("other escaped keys are kept, decoded", () => {
    assert.deepEqual(parseJson(String.raw`{"\u0061":1,"\u00e9":2,"x\n":3}`), { a: 1, é: 2, "x\n": 3 });
  });
});

describe("bounded decompression", () => {
  const MiB = 1024 * 1024;

  function drain(output: NodeJS.ReadableStream): Promise<{ bytes: number; error: unknown }> {
    return new Promise((resolve) => {
      let bytes = 0;
      output.on("data", (c: Buffer) => {
        bytes += c.length;
      });
      output.on("error", (error) => resolve({ bytes, error }));
      output.on("end", () => resolve({ bytes, error: undefined }));
    });
  }

  it("a streamed gzip bomb (1 GiB of zeros) stops at the first chunk past the limit → 413", async () => {
    const member = zlib.gzipSync(Buffer.alloc(MiB), { level: 9 });
    const bomb = Buffer.concat(Array.from({ length: 1024 }, () => member));
    const c = HTTP_COMPRESSIONS.get("gzip")!;
    const { input, output } = boundedDecompressStream(c, 4 * MiB);
    const done = drain(output);
    input.end(bomb);
    const { bytes, error } = await done;
    assert.ok(error instanceof RpcError && error.code === Code.ResourceExhausted && error.httpStatus === 413, String(error));
    assert.ok(bytes <= 4 * MiB, `${bytes} bytes passed the limit`);
    // A count, not a time: zlib took in about the 4 members (1 KiB each) that make 4 MiB, not
    // the bomb's 1,024 (an inflater left running consumes the whole input).
    const consumed = (input as zlib.Gunzip).bytesWritten;
    assert.ok(consumed < bomb.length / 16, `zlib consumed ${consumed} of the bomb's ${bomb.length} bytes`);
  });

  it("a streamed body within the limit passes whole; corrupt data → 400 invalid_argument", async () => {
    const c = HTTP_COMPRESSIONS.get("br")!;
    const ok = boundedDecompressStream(c, MiB);
    const done = drain(ok.output);
    ok.input.end(c.compress(Buffer.alloc(MiB, 7)));
    assert.deepEqual(await done, { bytes: MiB, error: undefined });
    const bad = boundedDecompressStream(HTTP_COMPRESSIONS.get("gzip")!, MiB);
    const failed = drain(bad.output);
    bad.input.end(Buffer.from("definitely not gzip"));
    const { error } = await failed;
    // invalid_argument is 400 by the status table; the error carries no explicit HTTP status.
    assert.ok(error instanceof RpcError && error.code === Code.InvalidArgument, String(error));
  });

  it("the buffered path stops at the limit too: a brotli bomb of 64 MiB costs about 4 MiB of inflation", async () => {
    const br = HTTP_COMPRESSIONS.get("br")!;
    const compress = (n: number) => zlib.brotliCompressSync(Buffer.alloc(n), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
    const z = compress(64 * MiB);
    const quarter = compress(16 * MiB);
    assertLimit(() => br.decompress(z, 4 * MiB), Code.ResourceExhausted, 413, /after decompression/);
    // Timed against inflating 16 MiB of the same zeros, back to back: the bomb stopped at 4 MiB
    // costs less (2-20 ms against 5-9 here, noisy: the baseline is floored at 20 ms); inflated
    // whole it costs 340-390 ms, over 15x.
    await assertWithin(
      5,
      "the 64 MiB bomb against 16 MiB inflated",
      () => assert.throws(() => br.decompress(z, 4 * MiB)),
      () => br.decompress(quarter, 16 * MiB),
      3,
      20,
    );
  });
});
