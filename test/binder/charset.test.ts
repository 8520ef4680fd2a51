import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { encodeText } from "../../src/codec/charset.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { H2, post1, type Reply, type RequestInit } from "../helpers/http.js";
import { multipart } from "./multipart.js";
import { BinderServiceImpl } from "./services.js";

/** Each charset with text it can represent (non-ASCII wherever the charset has any). */
const CASES: [string, string][] = [
  ["utf-8", "Grüße, 世界 ✓ 🚀"],
  ["UTF-8", "naïve café"],
  ["utf-16le", "Grüße, 世界 🚀"],
  ["utf-16be", "Grüße, 世界 🚀"],
  ["us-ascii", "plain ASCII text ~!"],
  ["iso-8859-1", "Grüße, señor, ¿qué?"],
  ["windows-1252", "€uro “quotes”"],
  ["gbk", "你好，世界"],
  ["gb18030", "你好，世界 𠀀"],
  ["shift_jis", "こんにちは、世界"],
  ["euc-jp", "日本語テキスト"],
  ["big5", "繁體中文"],
  ["euc-kr", "안녕하세요"],
  ["koi8-r", "Привет, мир"],
];

describe("charsets round-trip non-ASCII text", () => {
  let server: TripleServer;
  let h2: H2;
  before(async () => {
    server = createServer({ services: [new BinderServiceImpl()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    h2 = new H2(server.url);
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  for (const version of ["1.1", "2"] as const) {
    const call = (path: string, init: RequestInit): Promise<Reply> => (version === "1.1" ? post1(server.url, path, init) : h2.request(path, init));

    for (const [charset, text] of CASES) {
      it(`HTTP/${version}: text/plain; charset=${charset}`, async () => {
        const r = await call("/test.BinderService/echo", {
          headers: { "content-type": `text/plain; charset=${charset}` },
          body: encodeText(text, charset.toLowerCase()),
        });
        assert.equal(r.status, 200, r.text());
        assert.deepEqual(r.json(), { text });
      });
    }
  }

  it("a UTF-16 body with a byte-order mark and no LE/BE decodes", async () => {
    const body = Buffer.concat([Buffer.from([0xfe, 0xff]), encodeText("Grüße", "utf-16be")]);
    const r = await post1(server.url, "/test.BinderService/echo", { headers: { "content-type": "text/plain; charset=utf-16" }, body });
    assert.deepEqual(r.json(), { text: "Grüße" });
  });

  it("form values are percent-decoded in the form's charset", async () => {
    const bytes = encodeText("你好 世界", "gbk");
    const body = `text=${[...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")}`;
    const r = await post1(server.url, "/test.BinderService/echo", {
      headers: { "content-type": "application/x-www-form-urlencoded; charset=gbk" },
      body,
    });
    assert.deepEqual(r.json(), { text: "你好 世界" });
  });

  it("a multipart text part is decoded in its own charset", async () => {
    const m = multipart([{ name: "text", data: encodeText("こんにちは", "shift_jis"), contentType: "text/plain; charset=Shift_JIS" }]);
    const r = await h2.request("/test.BinderService/echo", { headers: m.headers, body: m.body });
    assert.deepEqual(r.json(), { text: "こんにちは" });
  });

  it("an unknown charset is 415 for text, form, XML and multipart parts", async () => {
    for (const ct of ["text/plain; charset=x-none", "application/x-www-form-urlencoded; charset=x-none", "application/xml; charset=x-none"]) {
      const r = await post1(server.url, "/test.BinderService/echo", { headers: { "content-type": ct }, body: "text=a" });
      assert.equal(r.status, 415, ct);
      assert.match(r.json().message, /unsupported charset "x-none"/);
    }
    const m = multipart([{ name: "text", data: "a", contentType: "text/plain; charset=x-none" }]);
    const r = await post1(server.url, "/test.BinderService/echo", { headers: m.headers, body: m.body });
    assert.equal(r.status, 415);
  });
});
