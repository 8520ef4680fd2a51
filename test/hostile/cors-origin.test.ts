import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, Method, Service, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";

/**
 * A lower finding of the hostile run: the pattern `https://*.example.com` was matched as text, so
 * `https://evil.com#.example.com` passed. Origins are now parsed (scheme, host, port) and a
 * pattern matches a host suffix on a label boundary only.
 */

@Service("hostile.Cors")
class CorsTarget {
  @Method()
  async ping(): Promise<string> {
    return "pong";
  }
}

describe("hostile: CORS patterns match origins structurally", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({
      services: [new CorsTarget()],
      cors: { origins: ["https://*.example.com", "http://localhost:*", "https://app.example.org"] },
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server.close());

  const preflight = (origin: string) =>
    post1(server.url, "/hostile.Cors/ping", {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST" },
    });

  const allowed = [
    "https://a.example.com",
    "https://deep.sub.example.com",
    "HTTPS://A.EXAMPLE.COM",
    "https://a.example.com:443",
    "http://localhost:5173",
    "http://localhost",
    "https://app.example.org",
  ];
  const refused = [
    "https://evil.com#.example.com",
    "https://evil.com/.example.com",
    "https://evil.com?.example.com",
    "https://user@evil.com#.example.com",
    "https://evilexample.com",
    "https://example.com",
    "https://.example.com",
    "http://a.example.com",
    "https://a.example.com:8443",
    "https://a.example.com.evil.com",
    "http://localhost.evil.com:80",
    "https://app.example.org.evil.com",
    "null",
  ];

  for (const origin of allowed) {
    it(`allows ${origin}`, async () => {
      const r = await preflight(origin);
      assert.equal(r.status, 204, r.text());
      assert.equal(r.headers["access-control-allow-origin"], origin);
    });
  }
  for (const origin of refused) {
    it(`refuses ${origin}`, async () => {
      const r = await preflight(origin);
      assert.equal(r.status, 403, r.text());
      assert.equal(r.headers["access-control-allow-origin"], undefined);
    });
  }

  it("an unsupported pattern is a registration error that says which forms work", () => {
    assert.throws(
      () => createServer({ services: [new CorsTarget()], cors: { origins: ["https://ex*ample.com"] } }),
      /CORS origin pattern "https:\/\/ex\*ample.com" is not supported: use "scheme:\/\/\*.domain"/,
    );
  });
});
