import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { Code, createServer, Method, Param, RpcError, Service, type TripleServer } from "../../src/index.js";
import { H2, JSON_HEADERS, post1 } from "../helpers/http.js";

/** An IDL-less server stream (kind inferred from the async generator) that fails past 5. */
@Service("count.Counter")
class Counter {
  @Method()
  async *upTo(@Param() n: number): AsyncGenerator<{ i: number }> {
    for (let i = 1; i <= n; i++) {
      if (i > 5) throw new RpcError(Code.OutOfRange, "too far");
      yield { i };
    }
  }
}

function events(text: string): string[] {
  return text.split("\n\n").filter((e) => e.length > 0);
}

describe("server streaming over plain HTTP as Server-Sent Events", () => {
  let server: TripleServer;
  let h2: H2;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new Counter()] });
    await server.listen({ port: 0 });
    h2 = new H2(server.url);
  });
  after(async () => {
    h2.close();
    await server.close();
  });

  it("HTTP/1.1: GreetServerStream is text/event-stream with one data: line per message", async () => {
    const r = await post1(server.url, "/greet.GreetService/GreetServerStream", {
      headers: JSON_HEADERS,
      body: '{"name":"ada"}',
    });
    assert.equal(r.status, 200);
    assert.match(String(r.headers["content-type"]), /^text\/event-stream/);
    assert.deepEqual(events(r.text()), [
      'data: {"greeting":"hello, ada (1/3)"}',
      'data: {"greeting":"hello, ada (2/3)"}',
      'data: {"greeting":"hello, ada (3/3)"}',
    ]);
  });

  it("HTTP/2 without a gRPC content type gets SSE too", async () => {
    const r = await h2.request("/greet.GreetService/GreetServerStream", { headers: JSON_HEADERS, body: '[{"name":"b"}]' });
    assert.equal(r.status, 200);
    assert.equal(events(r.text()).length, 3);
  });

  it("an error after messages is a final event: error with the JSON error body", async () => {
    const r = await post1(server.url, "/count.Counter/upTo", { headers: JSON_HEADERS, body: "7" });
    assert.equal(r.status, 200);
    const ev = events(r.text());
    assert.equal(ev.length, 6);
    assert.equal(ev[0], 'data: {"i":1}');
    assert.equal(ev[5], 'event: error\ndata: {"status":40,"message":"too far","code":"out_of_range"}');
  });

  it("bad arguments are an ordinary 400 before any event", async () => {
    const r = await post1(server.url, "/count.Counter/upTo", { headers: JSON_HEADERS, body: '"x"' });
    assert.equal(r.status, 400);
  });

  for (const m of ["GreetClientStream", "GreetStream"]) {
    it(`HTTP/1.1: ${m} is 505 with a clear message`, async () => {
      const r = await post1(server.url, `/greet.GreetService/${m}`, { headers: JSON_HEADERS, body: '{"name":"a"}' });
      assert.equal(r.status, 505);
      assert.match(r.json().message, /gRPC over HTTP\/2/);
    });
  }
});
