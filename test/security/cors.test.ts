import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";

@Service("test.Hello")
class Hello {
  @Method()
  async hi(@Param() name: string): Promise<string> {
    return `hi ${name}`;
  }
}

describe("CORS", () => {
  let server: TripleServer;
  let url: string;
  before(async () => {
    server = createServer({
      services: [new Hello()],
      cors: { origins: ["http://app.example", "https://*.example.org"], maxAgeSeconds: 600, exposedHeaders: ["x-extra"] },
    });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(() => server.close());

  it("preflight from an allowed origin → 204 allowing content-type, tri-*, grpc-timeout, authorization", async () => {
    const r = await post1(url, "/test.Hello/hi", {
      method: "OPTIONS",
      headers: {
        origin: "http://app.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, tri-service-version, tri-custom-thing, authorization, grpc-timeout",
      },
    });
    assert.equal(r.status, 204);
    assert.equal(r.headers["access-control-allow-origin"], "http://app.example");
    assert.equal(r.headers["access-control-allow-methods"], "GET, POST");
    const allowed = String(r.headers["access-control-allow-headers"]).split(", ");
    for (const h of ["content-type", "tri-protocol-version", "tri-service-timeout", "tri-custom-thing", "grpc-timeout", "authorization"]) {
      assert.ok(allowed.includes(h), `${h} allowed`);
    }
    assert.equal(r.headers["access-control-max-age"], "600");
    assert.equal(r.headers["content-length"], undefined);
  });

  it("wildcard subdomain patterns match; a disallowed origin gets 403 on preflight and on calls", async () => {
    const ok = await post1(url, "/test.Hello/hi", {
      method: "OPTIONS",
      headers: { origin: "https://a.example.org", "access-control-request-method": "POST" },
    });
    assert.equal(ok.status, 204);
    const pre = await post1(url, "/test.Hello/hi", {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    assert.equal(pre.status, 403);
    const call = await post1(url, "/test.Hello/hi", {
      headers: { ...JSON_HEADERS, origin: "http://evil.example" },
      body: '["x"]',
    });
    assert.equal(call.status, 403);
    assert.match(call.json().message, /origin http:\/\/evil.example is not allowed/);
  });

  it("responses to allowed origins expose grpc-status, grpc-message and tri-* over HTTP/1.1 and HTTP/2", async () => {
    const h2 = new H2(url);
    try {
      for (const r of [
        await post1(url, "/test.Hello/hi", { headers: { ...JSON_HEADERS, origin: "http://app.example" }, body: '["a"]' }),
        await h2.request("/test.Hello/hi", { headers: { ...JSON_HEADERS, origin: "http://app.example" }, body: '["a"]' }),
      ]) {
        assert.equal(r.status, 200);
        assert.equal(r.json(), "hi a");
        assert.equal(r.headers["access-control-allow-origin"], "http://app.example");
        const exposed = String(r.headers["access-control-expose-headers"]);
        for (const h of ["grpc-status", "grpc-message", "tri-service-version", "x-extra"]) assert.ok(exposed.includes(h), h);
      }
    } finally {
      h2.close();
    }
  });

  it("an error response to an allowed origin carries CORS headers too", async () => {
    const r = await post1(url, "/test.Hello/nope", {
      headers: { ...JSON_HEADERS, origin: "http://app.example" },
      body: "[]",
    });
    assert.equal(r.status, 404);
    assert.equal(r.headers["access-control-allow-origin"], "http://app.example");
  });

  it("requests without Origin are untouched", async () => {
    const r = await post1(url, "/test.Hello/hi", { headers: JSON_HEADERS, body: '["b"]' });
    assert.equal(r.status, 200);
    assert.equal(r.headers["access-control-allow-origin"], undefined);
  });
});
