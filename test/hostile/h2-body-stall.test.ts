import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import { CalcService } from "../server/fixtures.js";

// Issue 22, lower finding: HTTP/2 requests whose body never finishes were held indefinitely
// (60k held streams → 415 MB). A stream waiting for its request body that receives no DATA for
// `bodyIdleTimeoutMs` is answered 408 / deadline_exceeded and reset; a slow body that keeps
// arriving is not.

const LIMIT_MS = 500;
const WITHIN_MS = LIMIT_MS * 2 + 1_500;

interface Outcome {
  headers?: http2.IncomingHttpHeaders;
  trailers?: http2.IncomingHttpHeaders;
  body: string;
  closed: boolean;
  ms: number;
}

/** Opens a stream, writes `first` (without ending it), and waits for the server to end it. */
function stall(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, first: Buffer | string): Promise<Outcome> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const out: Outcome = { body: "", closed: false, ms: 0 };
    const req = session.request(headers);
    req.on("response", (h) => {
      out.headers = h;
    });
    req.on("trailers", (t) => {
      out.trailers = t;
    });
    req.on("data", (c: Buffer) => {
      out.body += c.toString();
    });
    req.on("error", () => {});
    const timer = setTimeout(() => {
      req.close();
      resolve(out);
    }, WITHIN_MS);
    req.on("close", () => {
      clearTimeout(timer);
      out.closed = true;
      out.ms = Date.now() - t0;
      resolve(out);
    });
    req.write(first);
  });
}

describe("hostile: HTTP/2 request bodies that stop arriving (bodyIdleTimeoutMs)", () => {
  let server: TripleServer;
  let session: http2.ClientHttp2Session;
  before(async () => {
    server = createServer({ services: [new CalcService()], bodyIdleTimeoutMs: LIMIT_MS, idleTimeoutMs: 60_000 });
    await server.listen({ port: 0 });
    session = http2.connect(server.url);
    session.on("error", () => {});
  });
  after(async () => {
    session.close();
    await server.close();
  });

  it("Triple JSON unary whose body never ends: 408 deadline_exceeded, the stream closed, the call no longer in flight", async () => {
    const o = await stall(session, { ":method": "POST", ":path": "/test.Calc/add", "content-type": "application/json" }, "[1,");
    assert.equal(o.closed, true, "the stream is still open");
    assert.equal(o.headers?.[":status"], 408);
    assert.match(o.body, /deadline_exceeded/);
    assert.ok(o.ms >= LIMIT_MS - 50, `cut after ${o.ms} ms`);
    assert.equal(server.inflightCount, 0);
  });

  it("gRPC unary whose message never completes: grpc-status 4 (deadline_exceeded)", async () => {
    const frameStart = Buffer.from([0, 0, 0, 0, 10, 1, 2]); // a 10-byte message, 2 bytes of it sent
    const o = await stall(session, { ":method": "POST", ":path": "/test.Calc/add", "content-type": "application/grpc+json", te: "trailers" }, frameStart);
    assert.equal(o.closed, true, "the stream is still open");
    const status = o.trailers?.["grpc-status"] ?? o.headers?.["grpc-status"];
    assert.equal(String(status), "4", JSON.stringify(o));
  });

  it("a slow body that keeps arriving (a byte every LIMIT/3) is served", async () => {
    const req = session.request({ ":method": "POST", ":path": "/test.Calc/add", "content-type": "application/json" });
    let status: number | undefined;
    let body = "";
    req.on("response", (h) => {
      status = Number(h[":status"]);
    });
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    const done = new Promise((r) => req.on("close", r));
    for (const ch of "[1, 2]") {
      req.write(ch);
      await new Promise((r) => setTimeout(r, LIMIT_MS / 3));
    }
    req.end();
    await done;
    assert.equal(status, 200);
    assert.equal(body, "3");
  });

  it("the connection carries on after a stream is cut", async () => {
    const req = session.request({ ":method": "POST", ":path": "/test.Calc/add", "content-type": "application/json" });
    req.end("[2,3]");
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    await new Promise((r) => req.on("close", r));
    assert.equal(body, "5");
  });
});
