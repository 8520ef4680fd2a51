import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";

describe("greet sample over both HTTP versions", () => {
  let server: TripleServer;
  let url: string;
  let h2: H2;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()] });
    await server.listen({ port: 0 });
    url = server.url;
    h2 = new H2(url);
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  for (const version of ["1.1", "2"] as const) {
    const call = (path: string, init: Parameters<typeof post1>[2]) => (version === "1.1" ? post1(url, path, init) : h2.request(path, init));

    it(`HTTP/${version}: Greet with the accepted name answers the greeting`, async () => {
      const r = await call("/greet.GreetService/Greet", { headers: JSON_HEADERS, body: '{"name":"triple"}' });
      assert.equal(r.status, 200);
      assert.match(String(r.headers["content-type"]), /^application\/json/);
      assert.deepEqual(r.json(), { greeting: "triple" });
    });

    it(`HTTP/${version}: a wrong name is a 500 with the handler's text and status 70`, async () => {
      const r = await call("/greet.GreetService/Greet", { headers: JSON_HEADERS, body: '[{"name":"nobody"}]' });
      assert.equal(r.status, 500);
      assert.deepEqual(r.json(), { status: 70, message: "name is not right: nobody", code: "unknown" });
    });
  }
});
