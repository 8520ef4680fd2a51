import * as assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import * as http2 from "node:http2";
import * as https from "node:https";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { createServer, type TripleServer } from "../../src/index.js";
import { JSON_HEADERS } from "../helpers/http.js";
import { CalcService } from "./fixtures.js";
import { selfSigned } from "../helpers/tls.js";

const execFileAsync = promisify(execFile);

describe("TLS: h2 and http/1.1 on one port by ALPN (issue 2 item 2)", () => {
  let server: TripleServer;
  let ca: Buffer;
  before(async () => {
    const { key, cert } = selfSigned();
    ca = cert;
    server = createServer({ services: [new CalcService()], tls: { key, cert } });
    await server.listen({ port: 0 });
  });
  after(() => server.close());

  it("the server URL is https", () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it("an http/1.1 ALPN client gets HTTP/1.1", async () => {
    const { port } = server.address;
    const res = await new Promise<{ status: number; body: string; alpn: string | false | null; version: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: "127.0.0.1",
          port,
          path: "/test.Calc/add",
          method: "POST",
          headers: JSON_HEADERS,
          ca,
          ALPNProtocols: ["http/1.1"],
          agent: false,
        } as https.RequestOptions,
        (r) => {
          let body = "";
          r.setEncoding("utf8");
          r.on("data", (d) => (body += d));
          r.on("end", () =>
            resolve({
              status: r.statusCode ?? 0,
              body,
              alpn: (r.socket as import("node:tls").TLSSocket).alpnProtocol,
              version: r.httpVersion,
            }),
          );
        },
      );
      req.on("error", reject);
      req.end("[20,22]");
    });
    assert.deepEqual(res, { status: 200, body: "42", alpn: "http/1.1", version: "1.1" });
  });

  it("an h2 ALPN client gets HTTP/2", async () => {
    const session = http2.connect(server.url, { ca });
    try {
      const r = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const s = session.request({ ":method": "POST", ":path": "/test.Calc/add", ...JSON_HEADERS });
        let status = 0;
        let body = "";
        s.on("response", (h) => (status = Number(h[":status"])));
        s.setEncoding("utf8");
        s.on("data", (d) => (body += d));
        s.on("end", () => resolve({ status, body }));
        s.on("error", reject);
        s.end("[1,2]");
      });
      assert.deepEqual(r, { status: 200, body: "3" });
      assert.equal(session.alpnProtocol, "h2");
    } finally {
      session.close();
    }
  });

  it("a TLS client offering no ALPN gets HTTP/1.1; errors are the same JSON over TLS", async () => {
    const { port } = server.address;
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request({ host: "127.0.0.1", port, path: "/no.Svc/x", method: "POST", headers: JSON_HEADERS, ca, agent: false }, (r) => {
        let body = "";
        r.on("data", (d) => (body += d));
        r.on("end", () => resolve({ status: r.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end("[]");
    });
    assert.equal(res.status, 404);
    assert.equal(JSON.parse(res.body).status, 60);
  });

  it("curl picks h2 by ALPN, or HTTP/1.1 when told", { skip: !hasCurl() }, async () => {
    const url = `${server.url}/test.Calc/add`;
    // Async: a synchronous child would block the event loop this server runs on.
    const run = async (...extra: string[]) =>
      (
        await execFileAsync(
          "curl",
          ["-sk", "--max-time", "10", ...extra, "-H", "content-type: application/json", "-d", "[2,3]", "-w", " %{http_version}", url],
          { encoding: "utf8" },
        )
      ).stdout;
    assert.equal(await run("--http2"), "5 2");
    assert.equal(await run("--http1.1"), "5 1.1");
  });
});

function hasCurl(): boolean {
  try {
    execFileSync("curl", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
