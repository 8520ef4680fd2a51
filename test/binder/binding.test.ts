import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, describeService, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";
import { FORM, multipart, TEXT, XML } from "./multipart.js";
import { BinderServiceImpl } from "./services.js";

const B = "/test.BinderService";

describe("binding rules by parameter type", () => {
  let server: TripleServer;
  let h2: H2;
  before(async () => {
    server = createServer({
      services: [new BinderServiceImpl()],
      limits: { maxParts: 4, maxFileBytes: 64 * 1024, maxFieldBytes: 1024, maxXmlDepth: 8, maxBodyBytes: 256 * 1024 },
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
    h2 = new H2(server.url);
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  it("registration reads @Param and @Field metadata into plain descriptors", () => {
    const d = describeService(BinderServiceImpl);
    const byName = Object.fromEntries(d.methods.map((m) => [m.name, m]));
    assert.deepEqual(
      byName.ordered.params.map((p) => p.type.kind),
      ["string", "number", "boolean", "date", "bigint"],
    );
    assert.deepEqual(
      byName.tags.params.map((p) => [p.name, p.type]),
      [
        ["tag", { kind: "array", element: { kind: "string" } }],
        ["n", { kind: "array", element: { kind: "number" } }],
      ],
    );
    assert.equal(byName.file.params[1].type.kind, "file");
    const profile = byName.profile.params[0].type;
    assert.equal(profile.kind, "class");
    if (profile.kind === "class") {
      assert.deepEqual(
        profile.fields.map((f) => [f.name, f.type.kind]),
        [
          ["name", "string"],
          ["age", "number"],
          ["admin", "boolean"],
          ["born", "date"],
          ["big", "bigint"],
          ["tags", "array"],
          ["address", "class"],
          ["scores", "map"],
        ],
      );
    }
  });

  it("a parameter class without @Field metadata fails at registration, naming it", () => {
    class Opaque {
      x = 1;
    }
    @Service("test.Bad")
    class Bad {
      @Method()
      m(@Param() o: Opaque) {
        return o;
      }
    }
    assert.throws(() => createServer({ services: [new Bad()] }), /Bad\.m parameter #1: class Opaque has no @Field\(\) metadata/);
  });

  it("form: a decorated class is bound field by field with conversions", async () => {
    const r = await post1(server.url, `${B}/profile`, {
      headers: FORM,
      body: "name=Ann&age=41&admin=true&born=2020-01-02T03:04:05Z&big=90071992547409930&tags=%5B%22a%22%2C%22b%22%5D&address=%7B%22city%22%3A%22Oslo%22%2C%22zip%22%3A123%7D",
    });
    assert.equal(r.status, 200, r.text());
    const b = r.json();
    assert.equal(b.isProfile, true);
    assert.deepEqual(
      [b.name, b.age, b.admin, b.born, b.big, b.city, b.zip, b.cityIsAddress],
      ["Ann", 41, true, "2020-01-02T03:04:05.000Z", "90071992547409930n", "Oslo", 123, true],
    );
  });

  it("form: unnamed parameters bind in order with conversions; bad values name the parameter", async () => {
    const ok = await post1(server.url, `${B}/ordered`, { headers: FORM, body: "a=x&b=2.5&c=false&d=1700000000000&e=-12345678901234567890" });
    assert.deepEqual(ok.json(), ["x", 2.5, false, "2023-11-14T22:13:20.000Z", "-12345678901234567890"]);
    for (const [body, pattern] of [
      ["a=x&b=NaN&c=true&d=2020-01-01&e=1", /parameter #2 must be a finite number/],
      ["a=x&b=1&c=maybe&d=2020-01-01&e=1", /parameter #3 must be a boolean/],
      ["a=x&b=1&c=true&d=yesterday&e=1", /parameter #4 must be a date/],
      ["a=x&b=1&c=true&d=2020-01-01&e=1.5", /parameter #5 must be an integer/],
      ["a=x&b=1", /parameter #3 is missing/],
    ] as const) {
      const r = await post1(server.url, `${B}/ordered`, { headers: FORM, body });
      assert.equal(r.status, 400, body);
      assert.match(r.json().message, pattern);
    }
  });

  it("form: repeated names fill array parameters", async () => {
    const r = await h2.request(`${B}/tags`, { headers: FORM, body: "tag=a&n=1&tag=b&n=2&other=x" });
    assert.deepEqual(r.json(), { tags: ["a", "b"], ns: [1, 2] });
  });

  it("multipart: unnamed parameters take parts in order; InMemoryFile keeps name and type", async () => {
    const m = multipart([
      { name: "n", data: "a note" },
      { name: "f", data: Buffer.from([1, 2, 3]), filename: "dir/pic.png", contentType: "image/png" },
    ]);
    const r = await h2.request(`${B}/file`, { headers: m.headers, body: m.body });
    assert.deepEqual(r.json(), { note: "a note", filename: "pic.png", contentType: "image/png", size: 3, isFile: true });
  });

  it("multipart: a binary part cannot bind to a string parameter", async () => {
    const m = multipart([{ name: "text", data: Buffer.from([0, 1]), filename: "x.bin", contentType: "application/octet-stream" }]);
    const r = await post1(server.url, `${B}/echo`, { headers: m.headers, body: m.body });
    assert.equal(r.status, 400);
    assert.match(r.json().message, /cannot take a binary part/);
  });

  it("multipart limits: too many parts, a large file, a large field → 413", async () => {
    const many = multipart(Array.from({ length: 6 }, (_, i) => ({ name: `p${i}`, data: "x" })));
    const bigFile = multipart([
      { name: "n", data: "x" },
      { name: "f", data: Buffer.alloc(65 * 1024), filename: "f.bin" },
    ]);
    const bigField = multipart([{ name: "text", data: "x".repeat(2000) }]);
    for (const m of [many, bigFile]) {
      const r = await h2.request(`${B}/file`, { headers: m.headers, body: m.body });
      assert.equal(r.status, 413, r.text());
      assert.equal(r.json().code, "resource_exhausted");
    }
    const r = await post1(server.url, `${B}/echo`, { headers: bigField.headers, body: bigField.body });
    assert.equal(r.status, 413);
    const after = await h2.request(`${B}/echo`, { headers: TEXT, body: "alive" });
    assert.deepEqual(after.json(), { text: "alive" });
  });

  it("form: a field over maxFieldBytes → 413", async () => {
    const r = await post1(server.url, `${B}/echo`, { headers: FORM, body: `text=${"x".repeat(2000)}` });
    assert.equal(r.status, 413);
  });

  it("XML: typed fields, attributes, repeated and wrapped lists, maps", async () => {
    const r = await post1(server.url, `${B}/profile`, {
      headers: { ...XML, accept: "application/json" },
      body: '<profile name="Ann"><age>41</age><admin>1</admin><born>2020-01-02</born><big>7</big><tags><tag>a</tag><tag>b</tag></tags><address zip="5"><city>Rome</city></address><scores><math>9</math><art>7.5</art></scores></profile>',
    });
    assert.equal(r.status, 200, r.text());
    const b = r.json();
    assert.deepEqual([b.name, b.age, b.admin, b.big, b.tags, b.city, b.zip, b.scores], ["Ann", 41, true, "7n", ["a", "b"], "Rome", 5, { math: 9, art: 7.5 }]);
    const bad = await post1(server.url, `${B}/profile`, { headers: XML, body: "<p><age>old</age></p>" });
    assert.equal(bad.status, 400);
    assert.match(bad.json().message, /\.age must be a finite number/);
  });

  it("XML: depth limit from the server's limits", async () => {
    const r = await post1(server.url, `${B}/record`, { headers: XML, body: `${"<a>".repeat(9)}${"</a>".repeat(9)}` });
    assert.equal(r.status, 400);
    assert.match(r.json().message, /deeper than 8/);
    const eight = await post1(server.url, `${B}/record`, { headers: { ...XML, accept: "application/json" }, body: `${"<a>".repeat(8)}${"</a>".repeat(8)}` });
    assert.equal(eight.status, 200, eight.text());
  });

  it("XML response: the root element is named after the returned class", async () => {
    const r = await post1(server.url, `${B}/address`, { headers: { ...JSON_HEADERS, accept: "text/xml" }, body: '["Nice <&>"]' });
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^text\/xml/);
    assert.equal(r.text(), '<?xml version="1.0" encoding="UTF-8"?><Address><city>Nice &lt;&amp;&gt;</city><zip>12345</zip></Address>');
  });

  it("the .proto-bound greet method refuses form, text and XML with 415", async () => {
    const { GreetServiceImpl } = await import("../../samples/greet/greet-service.js");
    const s = createServer({ services: [new GreetServiceImpl()] });
    await s.listen({ port: 0, host: "127.0.0.1" });
    try {
      for (const headers of [FORM, TEXT, XML]) {
        const r = await post1(s.url, "/greet.GreetService/Greet", { headers, body: "name=triple" });
        assert.equal(r.status, 415, headers["content-type"]);
        assert.match(r.json().message, /greet\.GreetRequest message/);
      }
    } finally {
      await s.close();
    }
  });
});
