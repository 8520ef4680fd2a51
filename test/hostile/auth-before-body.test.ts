import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { createServer, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { envelope, request1, request2 } from "../connect/raw.js";
import { frame } from "../grpc/raw.js";

/**
 * Break 2 of the hostile run: authentication used to run after the body was read and decoded, so
 * a caller without credentials made the server parse whatever it sent (see the form flood) and
 * got decode errors naming argument counts instead of 401. Now every protocol authenticates on
 * the headers first: these requests carry bodies that cannot decode, or bodies that never end,
 * and the only answer is `unauthenticated`, given before the body is finished.
 */

@Service("hostile.Vault", { auth: true })
class Vault {
  @Method({ idempotent: true })
  async get(@Param() key: string): Promise<string> {
    return `value of ${key}`;
  }

  @Method()
  async *watch(@Param() key: string): AsyncIterable<string> {
    yield `value of ${key}`;
  }
}

let verified = 0;

const NOT_JSON = "{ this is not json";
/** Two arguments where the method takes one: a decode error that would name the count. */
const TOO_MANY = '["a","b"]';

/** Each test is bounded: without the early check a request with an open body would wait forever. */
const BOUNDED = { timeout: 5_000 };

describe("hostile: authentication runs on the headers, before any body byte is parsed", () => {
  let server: TripleServer;
  let url: string;
  before(async () => {
    server = createServer({
      services: [new Vault()],
      auth: {
        verify: async (token) => {
          verified++;
          return token === "good" ? { subject: "good" } : null;
        },
      },
    });
    await server.listen({ port: 0, host: "127.0.0.1" });
    url = server.url;
  });
  after(() => server.close());

  const assertTriple401 = (r: { status: number; text(): string; headers: Record<string, unknown> }) => {
    assert.equal(r.status, 401, r.text());
    const body = JSON.parse(r.text());
    assert.equal(body.code, "unauthenticated");
    assert.doesNotMatch(body.message, /argument|parameter|JSON/i);
    assert.match(String(r.headers["www-authenticate"]), /^Bearer/);
  };

  for (const v of ["1.1", "2"] as const) {
    const send = v === "1.1" ? request1 : request2;
    it(`Triple HTTP/${v}: an undecodable or over-long body without a token is 401, not a decode error`, BOUNDED, async () => {
      for (const body of [NOT_JSON, TOO_MANY]) {
        assertTriple401(await send(url, "/hostile.Vault/get", { headers: { "content-type": "application/json" }, body }));
      }
    });

    it(`Triple HTTP/${v}: the 401 comes while the body is still being sent (it is never read)`, BOUNDED, async () => {
      const r = await send(url, "/hostile.Vault/get", {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "a&".repeat(50_000),
        open: true,
      });
      assertTriple401(r);
    });

    it(`Connect unary over HTTP/${v}: a garbage body without a token is unauthenticated, not invalid_argument`, BOUNDED, async () => {
      const r = await send(url, "/hostile.Vault/get", {
        headers: { "content-type": "application/json", "connect-protocol-version": "1" },
        body: NOT_JSON,
        open: true,
      });
      assert.equal(r.status, 401, r.text());
      assert.equal(JSON.parse(r.text()).code, "unauthenticated");
    });

    it(`Connect GET over HTTP/${v}: an undecodable message without a token is unauthenticated`, BOUNDED, async () => {
      const q = `connect=v1&encoding=json&message=${encodeURIComponent(NOT_JSON)}`;
      const r = await send(url, `/hostile.Vault/get?${q}`, { method: "GET" });
      assert.equal(r.status, 401, r.text());
      assert.equal(JSON.parse(r.text()).code, "unauthenticated");
    });

    it(`gRPC-Web over HTTP/${v}: an open stream of garbage without a token ends with grpc-status 16`, BOUNDED, async () => {
      const r = await send(url, "/hostile.Vault/get", {
        headers: { "content-type": "application/grpc-web+proto" },
        body: frame(Buffer.alloc(64, 0xff)),
        open: true,
      });
      assert.equal(r.status, 200);
      const status = r.headers["grpc-status"] ?? /grpc-status:\s*(\d+)/.exec(r.text())?.[1];
      assert.equal(String(status), "16", r.text());
    });
  }

  it("Connect stream: a garbage envelope on an open stream without a token ends unauthenticated", BOUNDED, async () => {
    const r = await request2(url, "/hostile.Vault/watch", {
      headers: { "content-type": "application/connect+json", "connect-protocol-version": "1" },
      body: envelope(0, NOT_JSON),
      open: true,
    });
    assert.match(r.text(), /"code":"unauthenticated"/);
  });

  it("gRPC: an undecodable message on a stream that never ends is answered 16 at once", BOUNDED, async () => {
    const session = http2.connect(url);
    session.on("error", () => {});
    try {
      const stream = session.request(
        { ":method": "POST", ":path": "/hostile.Vault/get", "content-type": "application/grpc", te: "trailers" },
        { endStream: false },
      );
      stream.write(frame(Buffer.alloc(64, 0xff)));
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        stream.on("response", resolve);
        stream.on("error", reject);
      });
      assert.equal(headers["grpc-status"], "16");
      assert.match(String(headers["grpc-message"]), /bearer token/);
      stream.destroy();
    } finally {
      session.close();
    }
  });

  it("with a valid token the same method is called, and the verifier ran once per call", BOUNDED, async () => {
    const before = verified;
    const r = await request1(url, "/hostile.Vault/get", {
      headers: { "content-type": "application/json", authorization: "Bearer good" },
      body: '["k"]',
    });
    assert.equal(r.status, 200, r.text());
    assert.equal(JSON.parse(r.text()), "value of k");
    assert.equal(verified - before, 1);
    const bad = await request1(url, "/hostile.Vault/get", {
      headers: { "content-type": "application/json", authorization: "Bearer good" },
      body: TOO_MANY,
    });
    assert.equal(bad.status, 400, "an authenticated caller gets the decode error");
  });
});
