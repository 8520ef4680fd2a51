import * as assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { UserServiceImpl } from "../../samples/user/user-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { H2, JSON_HEADERS, post1, type Reply, type RequestInit } from "../helpers/http.js";
import { FORM, multipart, TEXT, XML } from "./multipart.js";

const S = "/sample.UserService";

describe("sample.UserService: every body type over HTTP/1.1 and HTTP/2", () => {
  let server: TripleServer;
  let h2: H2;
  before(async () => {
    server = createServer({ services: [new UserServiceImpl()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
    h2 = new H2(server.url);
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  for (const version of ["1.1", "2"] as const) {
    const call = (path: string, init: RequestInit): Promise<Reply> => (version === "1.1" ? post1(server.url, path, init) : h2.request(path, init));
    const ok = (r: Reply, message: string, type = "application/json") => {
      assert.equal(r.status, 200, r.text());
      assert.match(String(r.headers["content-type"]), new RegExp(`^${type}`));
      if (type === "application/json") assert.deepEqual(r.json(), { message });
    };
    const bad = (r: Reply, status: number, legacy: number, pattern: RegExp) => {
      assert.equal(r.status, status, r.text());
      assert.match(String(r.headers["content-type"]), /^application\/json/);
      const b = r.json();
      assert.equal(b.status, legacy);
      assert.match(b.message, pattern);
    };
    const v = `HTTP/${version}:`;

    it(`${v} sayHello binds JSON ["Ann"] and text/plain Ann`, async () => {
      ok(await call(`${S}/sayHello`, { headers: JSON_HEADERS, body: '["Ann"]' }), "hello, Ann");
      ok(await call(`${S}/sayHello`, { headers: TEXT, body: "Ann" }), "hello, Ann");
      ok(await call(`${S}/SayHello`, { headers: { "content-type": "text/plain; charset=utf-8" }, body: "Zoë ✓" }), "hello, Zoë ✓");
    });

    it(`${v} text/plain into a two-parameter method is 400 naming the arity`, async () => {
      bad(await call(`${S}/register`, { headers: TEXT, body: "ann" }), 400, 40, /carries one argument.*takes 2/);
    });

    it(`${v} register binds a form by name, in any order, and JSON positionally`, async () => {
      ok(await call(`${S}/register`, { headers: FORM, body: "username=ann&age=30" }), "registered ann, age 30");
      ok(await call(`${S}/register`, { headers: FORM, body: "age=41&username=b%C3%B6b+x" }), "registered böb x, age 41");
      ok(await call(`${S}/register`, { headers: JSON_HEADERS, body: '["ann", 30]' }), "registered ann, age 30");
    });

    it(`${v} form: NaN, an empty number or a missing field is 400 naming the field`, async () => {
      bad(await call(`${S}/register`, { headers: FORM, body: "username=ann&age=thirty" }), 400, 40, /\(age\) must be a finite number/);
      bad(await call(`${S}/register`, { headers: FORM, body: "username=ann&age=" }), 400, 40, /\(age\) must be a finite number/);
      bad(await call(`${S}/register`, { headers: FORM, body: "username=ann" }), 400, 40, /\(age\) is missing/);
      bad(await call(`${S}/register`, { headers: FORM, body: "age=3" }), 400, 40, /\(username\) is missing/);
    });

    it(`${v} labels receives every form pair as a map, sorted in the answer`, async () => {
      ok(await call(`${S}/labels`, { headers: FORM, body: "zone=eu&app=shop&tier=web+1" }), "app=shop,tier=web 1,zone=eu");
      ok(await call(`${S}/labels`, { headers: FORM, body: "" }), "");
    });

    it(`${v} upload hands the file part over undecoded, with its sha256`, async () => {
      const file = randomBytes(70_000);
      file[0] = 0xff; // not valid UTF-8: decoding it as text would change the digest
      const m = multipart([
        { name: "title", data: "holiday" },
        { name: "file", data: file, filename: "a.jpg", contentType: "image/jpeg" },
      ]);
      const sha = createHash("sha256").update(file).digest("hex");
      ok(await call(`${S}/upload`, { headers: m.headers, body: m.body }), `holiday: 70000 bytes, sha256 ${sha}`);
    });

    it(`${v} upload binds parts by name whatever their order`, async () => {
      const m = multipart([
        { name: "file", data: "abc", filename: "a.txt", contentType: "text/plain" },
        { name: "title", data: '"json title"', contentType: "application/json" },
      ]);
      const sha = createHash("sha256").update("abc").digest("hex");
      ok(await call(`${S}/upload`, { headers: m.headers, body: m.body }), `json title: 3 bytes, sha256 ${sha}`);
    });

    it(`${v} a 3 MiB upload works`, async () => {
      const file = randomBytes(3 * 1024 * 1024);
      const m = multipart([
        { name: "title", data: "big" },
        { name: "file", data: file, filename: "big.bin", contentType: "application/octet-stream" },
      ]);
      const sha = createHash("sha256").update(file).digest("hex");
      ok(await call(`${S}/upload`, { headers: m.headers, body: m.body }), `big: ${file.length} bytes, sha256 ${sha}`);
    });

    it(`${v} multipart: a missing part, a truncated body, no boundary are 400`, async () => {
      const m = multipart([{ name: "title", data: "x" }]);
      bad(await call(`${S}/upload`, { headers: m.headers, body: m.body }), 400, 40, /\(file\) is missing/);
      bad(await call(`${S}/upload`, { headers: m.headers, body: m.body.subarray(0, m.body.length - 20) }), 400, 25, /malformed multipart/);
      bad(await call(`${S}/upload`, { headers: { "content-type": "multipart/form-data" }, body: m.body }), 400, 25, /boundary/);
    });

    it(`${v} saveUser decodes XML into User and answers XML`, async () => {
      const r = await call(`${S}/saveUser`, {
        headers: XML,
        body: '<?xml version="1.0" encoding="UTF-8"?>\n<user>\n  <username>ann &amp; co</username>\n  <location>Berlin</location>\n</user>',
      });
      ok(r, "", "application/xml");
      assert.equal(r.text(), '<?xml version="1.0" encoding="UTF-8"?><response><message>saved ann &amp; co from Berlin</message></response>');
    });

    it(`${v} saveUser answers JSON to JSON, and Accept picks the other type`, async () => {
      ok(await call(`${S}/saveUser`, { headers: JSON_HEADERS, body: '{"username":"ann","location":"Oslo"}' }), "saved ann from Oslo");
      const x = await call(`${S}/saveUser`, {
        headers: { ...JSON_HEADERS, accept: "application/xml" },
        body: '[{"username":"ann","location":"Oslo"}]',
      });
      ok(x, "", "application/xml");
      assert.match(x.text(), /<message>saved ann from Oslo<\/message>/);
      ok(
        await call(`${S}/saveUser`, { headers: { ...XML, accept: "application/json" }, body: "<user><username>a</username><location>b</location></user>" }),
        "saved a from b",
      );
    });

    it(`${v} XML: malformed, DTD, entity, several roots are 400 status 25`, async () => {
      bad(await call(`${S}/saveUser`, { headers: XML, body: "<user><username>ann</user>" }), 400, 25, /malformed XML/);
      bad(await call(`${S}/saveUser`, { headers: XML, body: "not xml at all" }), 400, 25, /malformed XML/);
      bad(await call(`${S}/saveUser`, { headers: XML, body: "" }), 400, 25, /empty XML/);
      bad(
        await call(`${S}/saveUser`, { headers: XML, body: '<!DOCTYPE user [<!ENTITY x SYSTEM "file:///etc/passwd">]><user><username>&x;</username></user>' }),
        400,
        25,
        /DTD/,
      );
      bad(await call(`${S}/saveUser`, { headers: XML, body: "<user><username>&nbsp;</username></user>" }), 400, 25, /undeclared entity/);
      bad(await call(`${S}/saveUser`, { headers: XML, body: "<user/><user/>" }), 400, 25, /one root/);
    });

    it(`${v} XML nested deeper than the limit is 400`, async () => {
      const deep = `<user>${"<a>".repeat(100)}${"</a>".repeat(100)}</user>`;
      bad(await call(`${S}/saveUser`, { headers: XML, body: deep }), 400, 25, /deeper than 64/);
    });

    it(`${v} an unknown charset is 415 naming it`, async () => {
      bad(await call(`${S}/sayHello`, { headers: { "content-type": "text/plain; charset=klingon" }, body: "x" }), 415, 25, /charset "klingon"/);
      bad(await call(`${S}/register`, { headers: { "content-type": `${FORM["content-type"]}; charset=klingon` }, body: "a=1" }), 415, 25, /klingon/);
    });
  }

  it("other calls keep working after bad bodies", async () => {
    const r = await post1(server.url, `${S}/sayHello`, { headers: TEXT, body: "still here" });
    assert.deepEqual(r.json(), { message: "hello, still here" });
  });
});
