import * as assert from "node:assert/strict";
import * as net from "node:net";
import { after, before, describe, it } from "node:test";
import { CallContext, closeClient, createClient, createServer, Ctx, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { CalcService } from "./fixtures.js";

// Issue 22, lower findings: an absolute-form request target (RFC 9112 §3.2.2) and
// `httpVersion: 2` given as a number.

/** Sends raw HTTP/1.1 bytes, resolves with the whole answer (the request says Connection: close). */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = "";
    const s = net.connect(port, "127.0.0.1", () => s.write(request));
    s.on("data", (c: Buffer) => {
      data += c.toString();
    });
    s.on("error", reject);
    s.on("close", () => resolve(data));
  });
}

@Service("test.Version")
class VersionService {
  @Method()
  which(@Param() x: number, @Ctx() ctx: CallContext): string {
    return `${x} over HTTP/${ctx.httpVersion}`;
  }
}

describe("request targets and the httpVersion option", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new CalcService(), new VersionService()] });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  const call = (target: string) =>
    `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n[1,2]`;

  it("an absolute-form target is served by its path (RFC 9112 §3.2.2)", async () => {
    const { port } = server.address;
    for (const target of [`http://127.0.0.1:${port}/test.Calc/add`, "http://example.com/test.Calc/add", "HTTPS://h/test.Calc/add?x=1"]) {
      const res = await raw(port, call(target));
      assert.match(res, /^HTTP\/1\.1 200/, target);
      assert.match(res, /\r\n\r\n3$/, target);
    }
  });

  it("an absolute-form target without a path is /, and unknown paths stay 404", async () => {
    const { port } = server.address;
    assert.match(await raw(port, call("http://127.0.0.1")), /^HTTP\/1\.1 404/);
    assert.match(await raw(port, call("http://h/no.Such/thing")), /^HTTP\/1\.1 404/);
  });

  it("the origin form is unchanged", async () => {
    assert.match(await raw(server.address.port, call("/test.Calc/add")), /\r\n\r\n3$/);
  });

  for (const [v, expect] of [
    [2, "2"],
    ["2", "2"],
    [1.1, "1.1"],
    ["1.1", "1.1"],
    ["2.0", "2"],
  ] as const) {
    it(`createClient httpVersion ${JSON.stringify(v)} (${typeof v}) → HTTP/${expect}`, async () => {
      const c = createClient(VersionService, { providers: [server.url], httpVersion: v as "2" });
      try {
        assert.equal(await c.which(7), `7 over HTTP/${expect}`);
      } finally {
        closeClient(c);
      }
    });
  }

  it("an invalid httpVersion is refused with a message listing the valid values", () => {
    for (const v of [3, "3", "h2", 1]) {
      assert.throws(
        () => createClient(VersionService, { providers: [server.url], httpVersion: v as "2" }),
        (e: Error) =>
          e instanceof TypeError &&
          /httpVersion must be "2" or "1\.1" \(the numbers 2 and 1\.1 work too\), got /.test(e.message) &&
          e.message.includes(String(v)),
      );
    }
  });
});
