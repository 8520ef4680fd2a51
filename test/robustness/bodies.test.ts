import * as assert from "node:assert/strict";
import * as zlib from "node:zlib";
import { after, before, describe, it } from "node:test";
import { H2, post1, type Reply } from "../helpers/http.js";
import { assertWithin } from "../helpers/timing.js";
import { brotliZeros, deflateZeros, gzipZeros } from "./bomb.js";
import { codecAvailable, ServerChild, whileGreeting } from "./child.js";

const JSON_CT = { "content-type": "application/json" };
const FORM_CT = { "content-type": "application/x-www-form-urlencoded" };
const XML_CT = { "content-type": "application/xml" };
const BOUNDARY = "robustBoundary7MA4YWxk";
const MULTIPART_CT = { "content-type": `multipart/form-data; boundary=${BOUNDARY}` };

function multipart(parts: ReadonlyArray<{ name: string; filename?: string; type?: string; body: string | Buffer }>): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += "\r\n";
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    out.push(Buffer.from(`${head}\r\n`), Buffer.isBuffer(p.body) ? p.body : Buffer.from(p.body), Buffer.from("\r\n"));
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(out);
}

/**
 * A sane answer to a hostile body: success, a 400, or Greet's own handler error for a name it
 * does not accept (the hostile keys were dropped and the name came out empty).
 */
function assertSane(r: Reply, what: string): void {
  const handlerError = r.status === 500 && /"code":"unknown"/.test(r.text()) && /name is not right/.test(r.text());
  assert.ok(r.status === 200 || r.status === 400 || handlerError, `${what}: ${r.status} ${r.text().slice(0, 200)}`);
  if (r.status === 400) assert.equal(r.json().code, "invalid_argument");
}

function assertError(r: Reply, status: number, code: string, message?: RegExp): void {
  assert.equal(r.status, status, `${r.status} ${r.text().slice(0, 300)}`);
  assert.match(String(r.headers["content-type"]), /^application\/json/);
  const body = r.json();
  assert.equal(body.code, code);
  if (message) assert.match(body.message, message);
}

/**
 * Hostile request bodies over Triple HTTP: decompression bombs, deep nesting, XML entity bombs,
 * part floods and prototype-pollution keys. Each gets a clear 4xx, the server's memory stays
 * bounded, Object.prototype stays clean, and well-formed calls made meanwhile succeed.
 */
describe("robustness: hostile request bodies", () => {
  let server: ServerChild;
  let url: string;
  let h2: H2;
  const have = { form: false, multipart: false, xml: false };

  before(async () => {
    server = await ServerChild.start();
    url = server.url;
    h2 = new H2(url);
    have.form = await codecAvailable(url, FORM_CT["content-type"]);
    have.multipart = await codecAvailable(url, MULTIPART_CT["content-type"]);
    have.xml = await codecAvailable(url, XML_CT["content-type"]);
  });
  after(async () => {
    h2?.close();
    await server.stop();
  });

  describe("decompression bombs → 413, never inflated fully", () => {
    it("baseline: a gzip body within the limit is accepted", async () => {
      const r = await post1(url, "/greet.GreetService/Greet", {
        headers: { ...JSON_CT, "content-encoding": "gzip" },
        body: zlib.gzipSync('{"name":"triple"}'),
      });
      assert.equal(r.status, 200, r.text());
    });

    it("gzip of 1 GiB of zeros (~1 MiB on the wire) over HTTP/1.1 and HTTP/2 → 413 resource_exhausted", async () => {
      const bomb = gzipZeros(1024);
      assert.ok(bomb.length < 4 * 1024 * 1024, "the bomb itself must fit under the body limit");
      await whileGreeting(url, async () => {
        const init = { headers: { ...JSON_CT, "content-encoding": "gzip" }, body: bomb };
        assertError(await post1(url, "/greet.GreetService/Greet", init), 413, "resource_exhausted", /after decompression|larger than/);
        assertError(await h2.request("/greet.GreetService/Greet", init), 413, "resource_exhausted");
      });
      // Timed against a gzip greet of 4 MiB (the limit: all a bomb may cost), back to back, in
      // place of a 10 s wall bound: inflating the whole GiB costs some 20x that.
      const limit = zlib.gzipSync(JSON.stringify({ name: "triple", pad: "0".repeat(4 * 1024 * 1024 - 100) }));
      const greet = (body: Buffer, status: number) => async () =>
        assert.equal((await post1(url, "/greet.GreetService/Greet", { headers: { ...JSON_CT, "content-encoding": "gzip" }, body })).status, status);
      await assertWithin(5, "a 1 GiB gzip bomb against a 4 MiB gzip greet", greet(bomb, 413), greet(limit, 200), 2, 50);
      const rep = await server.assertHealthy();
      assert.ok(rep.rss < 200 * 1024 * 1024, `RSS ${rep.rss} after the bomb`);
    });

    it("deflate and brotli bombs (256 MiB of zeros) → 413", async () => {
      const [deflated, brotli] = await Promise.all([deflateZeros(256), brotliZeros(256)]);
      await whileGreeting(url, async () => {
        const d = await post1(url, "/greet.GreetService/Greet", { headers: { ...JSON_CT, "content-encoding": "deflate" }, body: deflated });
        assertError(d, 413, "resource_exhausted");
        const b = await post1(url, "/greet.GreetService/Greet", { headers: { ...JSON_CT, "content-encoding": "br" }, body: brotli });
        assertError(b, 413, "resource_exhausted");
      });
      await server.assertHealthy();
    });

    it("a gzip bomb on a streaming codec (multipart) → 413", async (t) => {
      if (!have.multipart) return t.skip("multipart codec not registered yet (src/codec/codec-table.ts)");
      const body = zlib.gzipSync(
        multipart([
          { name: "file", filename: "z.bin", body: Buffer.alloc(64 * 1024 * 1024) },
          { name: "note", body: "n" },
        ]),
      );
      const r = await post1(url, "/robust.User/Upload", { headers: { ...MULTIPART_CT, "content-encoding": "gzip" }, body });
      assertError(r, 413, "resource_exhausted");
      await server.assertHealthy();
    });

    it("corrupt gzip → 400, not 500", async () => {
      const r = await post1(url, "/greet.GreetService/Greet", { headers: { ...JSON_CT, "content-encoding": "gzip" }, body: "not gzip at all" });
      assertError(r, 400, "invalid_argument");
    });

    it("a plain body over 4 MiB → 413 (declared length and chunked alike)", async () => {
      const big = Buffer.alloc(5 * 1024 * 1024, 0x20);
      assertError(await post1(url, "/greet.GreetService/Greet", { headers: JSON_CT, body: big }), 413, "resource_exhausted");
      assertError(await h2.request("/greet.GreetService/Greet", { headers: JSON_CT, body: big }), 413, "resource_exhausted");
    });
  });

  describe("deeply nested JSON", () => {
    const N = 100_000;
    it("100 000 nested arrays or objects → 400 naming the depth limit (status 25), server alive", async () => {
      const bodies = ["[".repeat(N) + "]".repeat(N), `${'{"a":'.repeat(N)}1${"}".repeat(N)}`, `${'{"name":'.repeat(N)}"x"${"}".repeat(N)}`];
      await whileGreeting(url, async () => {
        for (const path of ["/robust.User/Inspect", "/robust.User/Register", "/greet.GreetService/Greet"]) {
          for (const body of bodies) {
            const r = await post1(url, path, { headers: JSON_CT, body });
            assertSane(r, path);
            assertError(r, 400, "invalid_argument", /nested deeper than 100 levels/);
            assert.equal(r.json().status, 25);
          }
        }
      });
      await server.assertHealthy();
    });

    it("100 000 unclosed brackets → 400 with legacy status 25 (cannot decode)", async () => {
      const r = await post1(url, "/robust.User/Inspect", { headers: JSON_CT, body: "[".repeat(N) });
      assertError(r, 400, "invalid_argument", /invalid JSON/);
      assert.equal(r.json().status, 25);
    });
  });

  describe("XML bombs and DTDs", () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from(
      { length: 8 },
      (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i || ""};`.repeat(10)}">`,
    ).join("")}]><user><username>&lol8;</username><location>x</location></user>`;

    it("baseline: a plain XML user binds", async (t) => {
      if (!have.xml) return t.skip("XML codec not registered yet (src/codec/codec-table.ts)");
      const r = await post1(url, "/robust.User/Register", { headers: XML_CT, body: "<user><username>ann</username><location>Oslo</location></user>" });
      assert.equal(r.status, 200, r.text());
      assert.match(r.text(), /<message>ann@Oslo<\/message>/);
    });

    it("billion laughs → 400 (no DTD, no entity expansion), promptly", async (t) => {
      if (!have.xml) return t.skip("XML codec not registered yet (src/codec/codec-table.ts)");
      await whileGreeting(url, async () => {
        const r = await post1(url, "/robust.User/Register", { headers: XML_CT, body: laughs });
        assertError(r, 400, "invalid_argument", /DTD|ENTITY|entit/i);
      });
      await server.assertHealthy();
    });

    it("an external entity (XXE: file:///etc/passwd) → 400, the file never read back", async (t) => {
      if (!have.xml) return t.skip("XML codec not registered yet (src/codec/codec-table.ts)");
      const body = '<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">]><user><username>&x;</username><location>l</location></user>';
      const r = await post1(url, "/robust.User/Register", { headers: XML_CT, body });
      assertError(r, 400, "invalid_argument");
      assert.doesNotMatch(r.text(), /root:/);
    });

    it("a bare DOCTYPE → 400", async (t) => {
      if (!have.xml) return t.skip("XML codec not registered yet (src/codec/codec-table.ts)");
      const r = await post1(url, "/robust.User/Register", {
        headers: XML_CT,
        body: '<!DOCTYPE user SYSTEM "http://127.0.0.1:1/x.dtd"><user><username>a</username><location>b</location></user>',
      });
      assertError(r, 400, "invalid_argument");
    });

    it("nesting 100 000 elements deep → 400 (depth limit 64)", async (t) => {
      if (!have.xml) return t.skip("XML codec not registered yet (src/codec/codec-table.ts)");
      const r = await post1(url, "/robust.User/Register", { headers: XML_CT, body: `<user>${"<a>".repeat(N2)}${"</a>".repeat(N2)}</user>` });
      assertError(r, 400, "invalid_argument", /deeper than 64|depth/);
    });
  });

  describe("multipart floods", () => {
    it("5 000 parts → 413 (limit 64 parts), promptly", async (t) => {
      if (!have.multipart) return t.skip("multipart codec not registered yet (src/codec/codec-table.ts)");
      const body = multipart(Array.from({ length: 5000 }, (_, i) => ({ name: `f${i}`, body: "v" })));
      await whileGreeting(url, async () => {
        assertError(await post1(url, "/robust.User/Upload", { headers: MULTIPART_CT, body }), 413, "resource_exhausted", /parts/);
        assertError(await h2.request("/robust.User/Upload", { headers: MULTIPART_CT, body }), 413, "resource_exhausted");
      });
      await server.assertHealthy();
    });

    it("a file part over 4 MiB → 413; a small upload still works", async (t) => {
      if (!have.multipart) return t.skip("multipart codec not registered yet (src/codec/codec-table.ts)");
      const big = multipart([
        { name: "file", filename: "big.bin", type: "application/octet-stream", body: Buffer.alloc(4 * 1024 * 1024 + 1) },
        { name: "note", body: "n" },
      ]);
      assertError(await post1(url, "/robust.User/Upload", { headers: MULTIPART_CT, body: big }), 413, "resource_exhausted");
      const ok = await post1(url, "/robust.User/Upload", {
        headers: MULTIPART_CT,
        body: multipart([
          { name: "file", filename: "a.txt", type: "text/plain", body: "hello" },
          { name: "note", body: "n" },
        ]),
      });
      assert.equal(ok.status, 200, ok.text());
      assert.deepEqual(ok.json(), { size: 5, filename: "a.txt", note: "n" });
    });

    it("a body that never reaches its closing boundary → 400, not a hang", async (t) => {
      if (!have.multipart) return t.skip("multipart codec not registered yet (src/codec/codec-table.ts)");
      const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nunfinished`;
      const r = await post1(url, "/robust.User/Upload", { headers: MULTIPART_CT, body });
      assert.equal(r.status, 400, r.text());
    });
  });

  describe("prototype-pollution keys never reach Object.prototype", () => {
    const check = async (r: Reply) => {
      assertSane(r, "pollution attempt");
      if (r.status === 200 && r.headers["content-type"]?.toString().startsWith("application/json")) {
        assert.doesNotMatch(r.text(), /"inheritedPolluted":true/);
      }
      const rep = await server.report();
      assert.deepEqual(rep.pollution, [], "Object.prototype was polluted");
    };

    it("JSON: __proto__, constructor.prototype, prototype keys (top level and nested, every method kind)", async () => {
      const bodies = [
        '{"__proto__":{"polluted":true},"a":1}',
        '[{"__proto__":{"polluted":true}}]',
        '{"constructor":{"prototype":{"polluted":true}},"username":"a","location":"b"}',
        '{"username":"a","location":"b","nested":{"__proto__":{"isAdmin":true},"prototype":{"role":"x"}}}',
        '{"a":[{"__proto__":{"polluted":1}}]}',
      ];
      for (const path of ["/robust.User/Inspect", "/robust.User/Register", "/greet.GreetService/Greet"]) {
        for (const body of bodies) {
          await check(await post1(url, path, { headers: JSON_CT, body }));
          await check(await h2.request(path, { headers: JSON_CT, body }));
        }
      }
      const r = await post1(url, "/robust.User/Inspect", { headers: JSON_CT, body: '{"__proto__":{"polluted":true},"a":1}' });
      assert.deepEqual(r.json().keys, ["a"], "__proto__ should be dropped from the bound value");
    });

    it("form: __proto__[x]=…, __proto__=…, constructor[prototype][x]=…", async (t) => {
      if (!have.form) return t.skip("form codec not registered yet (src/codec/codec-table.ts)");
      const body = "__proto__[polluted]=1&__proto__=x&constructor[prototype][polluted]=1&constructor=1&prototype=2&username=u&location=l";
      for (const path of ["/robust.User/Form", "/robust.User/Login", "/robust.User/Register"]) {
        await check(await post1(url, path, { headers: FORM_CT, body }));
      }
      const r = await post1(url, "/robust.User/Login", { headers: FORM_CT, body });
      assert.equal(r.status, 200, r.text());
      assert.deepEqual(r.json(), { message: "u@l" });
    });

    it("multipart: parts named __proto__ / constructor / prototype", async (t) => {
      if (!have.multipart) return t.skip("multipart codec not registered yet (src/codec/codec-table.ts)");
      const body = multipart([
        { name: "__proto__", body: '{"polluted":true}', type: "application/json" },
        { name: "constructor", body: "x" },
        { name: "prototype", body: "y" },
        { name: "file", filename: "__proto__", type: "text/plain", body: "hi" },
        { name: "note", body: "n" },
      ]);
      for (const path of ["/robust.User/Upload", "/robust.User/Form", "/robust.User/Inspect"]) {
        await check(await post1(url, path, { headers: MULTIPART_CT, body }));
      }
    });

    it("XML: <__proto__>, <constructor><prototype> elements and attributes", async (t) => {
      if (!have.xml) return t.skip("XML codec not registered yet (src/codec/codec-table.ts)");
      const body =
        '<user __proto__="x" constructor="y"><username>u</username><location>l</location><__proto__><polluted>1</polluted></__proto__><constructor><prototype><polluted>1</polluted></prototype></constructor></user>';
      for (const path of ["/robust.User/Register", "/robust.User/Inspect", "/robust.User/Form"]) {
        await check(await post1(url, path, { headers: XML_CT, body }));
      }
    });
  });

  it("the server survived every hostile body", async () => {
    await server.assertHealthy();
  });
});

const N2 = 100_000;
