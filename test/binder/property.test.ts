import * as assert from "node:assert/strict";
import * as http from "node:http";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { UserServiceImpl } from "../../samples/user/user-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { H2, post1, type Reply } from "../helpers/http.js";
import { multipart } from "./multipart.js";
import { BinderServiceImpl } from "./services.js";

const PATHS = [
  "/sample.UserService/sayHello",
  "/sample.UserService/register",
  "/sample.UserService/labels",
  "/sample.UserService/upload",
  "/sample.UserService/saveUser",
  "/test.BinderService/record",
  "/test.BinderService/profile",
  "/test.BinderService/ordered",
  "/test.BinderService/tags",
  "/test.BinderService/file",
];
const CHARSETS = ["utf-8", "utf-16le", "utf-16be", "us-ascii", "iso-8859-1", "gbk", "shift_jis", "nope", ""];
// BINDER_RUNS raises the count for a longer local search.
const RUNS = Number(process.env.BINDER_RUNS ?? 40);

const path = fc.constantFrom(...PATHS);
const charset = fc.constantFrom(...CHARSETS);
const names = fc.constantFrom("name", "username", "age", "title", "file", "tag", "n", "__proto__", "constructor", "a", "");
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom("", "NaN", "1e309", "-0", "true", "2020-01-01", "[1,2]", '{"a":1}'),
);
const bytes = fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a));

const formBody = fc.oneof(
  fc.array(fc.tuple(names, text), { maxLength: 8 }).map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&")),
  fc.string({ unit: fc.constantFrom("a", "=", "&", "%", "+", "1", "%zz", "%C3", "é"), maxLength: 40 }),
);

// XML from a small grammar (elements, attributes, text, entities, CDATA) plus raw noise.
const xmlNode: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text.map((t) => t.replace(/[<&]/g, "")),
    fc.constantFrom("&amp;", "&lt;", "&#65;", "&#x1F600;", "&bogus;", "&#0;", "<![CDATA[<x>]]>", "<!-- c -->", "<!DOCTYPE a>", "<?pi x?>"),
    fc.tuple(names, fc.array(tie("node"), { maxLength: 3 }), fc.option(text.map((t) => t.replace(/["<&]/g, "")))).map(([n, kids, attr]) => {
      const tag = n === "" ? "x" : n;
      return `<${tag}${attr === null ? "" : ` a="${attr}"`}>${kids.join("")}</${tag}>`;
    }),
  ),
})).node;
const xmlBody = fc.oneof(xmlNode, fc.string({ unit: fc.constantFrom("<", ">", "/", "a", " ", "&", ";", "=", '"', "!", "?"), maxLength: 40 }));

const partSpec = fc.record({
  name: names,
  data: fc.oneof(text, bytes),
  filename: fc.option(fc.constantFrom("a.txt", "../../etc/passwd", "x.bin", ""), { nil: undefined }),
  contentType: fc.option(
    fc.constantFrom("text/plain", "text/plain; charset=gbk", "text/plain; charset=nope", "application/json", "image/png", "application/octet-stream"),
    { nil: undefined },
  ),
});
const multipartBody = fc.oneof(
  fc.array(partSpec, { maxLength: 6 }).map((parts) => multipart(parts)),
  fc.tuple(fc.array(partSpec, { maxLength: 3 }), fc.nat(400)).map(([parts, cut]) => {
    const m = multipart(parts);
    return { headers: m.headers, body: m.body.subarray(0, Math.min(cut, m.body.length)) };
  }),
  bytes.map((body) => ({ headers: { "content-type": "multipart/form-data; boundary=xyz" }, body })),
);

describe("property: random bodies of every content type never crash the server or produce a 5xx", () => {
  let server: TripleServer;
  let agent: http.Agent;
  let h2: H2;
  before(async () => {
    server = createServer({ services: [new UserServiceImpl(), new BinderServiceImpl()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    h2 = new H2(server.url);
  });
  after(async () => {
    agent.destroy();
    h2.close();
    await server.close();
  });

  let n = 0;
  /** Alternates HTTP/1.1 and HTTP/2 so both transports see every kind of body. */
  const send = (p: string, headers: Record<string, string>, body: string | Buffer): Promise<Reply> =>
    n++ % 2 === 0 ? post1(server.url, p, { headers, body, agent }) : h2.request(p, { headers, body });

  const check = (r: Reply) => {
    if (process.env.BINDER_STATS) console.log("STAT", r.status);
    assert.ok(r.status < 500, `status ${r.status}: ${r.text().slice(0, 200)}`);
    if (r.status !== 200) assert.match(String(r.headers["content-type"]), /^application\/json/);
  };

  const ct = (type: string, cs: string) => (cs === "" ? type : `${type}; charset=${cs}`);

  it("application/json", async () => {
    const body = fc.oneof(
      fc.json().map((j) => j),
      bytes.map((b) => b.toString("latin1")),
    );
    await fc.assert(
      fc.asyncProperty(path, body, async (p, b) => check(await send(p, { "content-type": "application/json" }, b))),
      { numRuns: RUNS },
    );
  });

  it("application/x-www-form-urlencoded", async () => {
    await fc.assert(
      fc.asyncProperty(path, formBody, charset, async (p, b, cs) => check(await send(p, { "content-type": ct("application/x-www-form-urlencoded", cs) }, b))),
      { numRuns: RUNS },
    );
  });

  it("text/plain", async () => {
    await fc.assert(
      fc.asyncProperty(
        path,
        fc.oneof(
          text.map((t) => Buffer.from(t)),
          bytes,
        ),
        charset,
        async (p, b, cs) => check(await send(p, { "content-type": ct("text/plain", cs) }, b)),
      ),
      { numRuns: RUNS },
    );
  });

  it("application/xml", async () => {
    await fc.assert(
      fc.asyncProperty(path, xmlBody, fc.constantFrom("application/xml", "text/xml"), async (p, b, type) => check(await send(p, { "content-type": type }, b))),
      { numRuns: RUNS * 2 },
    );
  });

  it("multipart/form-data", async () => {
    await fc.assert(
      fc.asyncProperty(path, multipartBody, async (p, m) => check(await send(p, m.headers, m.body))),
      { numRuns: RUNS * 2 },
    );
  });

  it("the server still answers afterwards", async () => {
    const r = await post1(server.url, "/sample.UserService/sayHello", { headers: { "content-type": "text/plain" }, body: "end" });
    assert.deepEqual(r.json(), { message: "hello, end" });
  });
});
