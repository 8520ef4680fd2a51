import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import * as zlib from "node:zlib";
import { createServer, type TripleServer } from "../../src/index.js";
import { JSON_HEADERS } from "../helpers/http.js";
import { type Caller, errorOf, http1Caller, http2Caller } from "./callers.js";
import { CalcService } from "./fixtures.js";

const MiB = 1024 * 1024;

const compressors: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  br: (b) => zlib.brotliCompressSync(b),
};
const decompressors: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gunzipSync(b),
  deflate: (b) => zlib.inflateSync(b),
  br: (b) => zlib.brotliDecompressSync(b),
};

describe("compression and the body limit (issue 2 item 6)", () => {
  let server: TripleServer;
  let callers: Caller[];
  before(async () => {
    server = createServer({ services: [new CalcService()] });
    await server.listen({ port: 0 });
    callers = [http1Caller(server.url), http2Caller(server.url)];
  });
  after(async () => {
    for (const c of callers) c.close();
    await server.close();
  });

  for (const v of ["1.1", "2"] as const) {
    const c = () => callers[v === "1.1" ? 0 : 1];
    describe(`HTTP/${v}`, () => {
      for (const enc of ["gzip", "deflate", "br"]) {
        it(`decodes a ${enc} request body`, async () => {
          const r = await c().call("/test.Calc/add", {
            headers: { ...JSON_HEADERS, "content-encoding": enc },
            body: compressors[enc](Buffer.from("[40,2]")),
          });
          assert.equal(r.status, 200, r.text());
          assert.equal(r.json(), 42);
        });

        it(`compresses a large response with ${enc} when Accept-Encoding allows only it`, async () => {
          const r = await c().call("/test.Calc/repeat", {
            headers: { ...JSON_HEADERS, "accept-encoding": enc },
            body: "[5000]",
          });
          assert.equal(r.status, 200);
          assert.equal(r.headers["content-encoding"], enc);
          assert.ok(r.body.length < 1000, `compressed to ${r.body.length} bytes`);
          assert.equal(JSON.parse(decompressors[enc](r.body).toString()), "x".repeat(5000));
        });
      }

      it("identity Content-Encoding is accepted", async () => {
        const r = await c().call("/test.Calc/add", {
          headers: { ...JSON_HEADERS, "content-encoding": "identity" },
          body: "[1,2]",
        });
        assert.equal(r.json(), 3);
      });

      it("small responses and clients without Accept-Encoding get no compression", async () => {
        const small = await c().call("/test.Calc/repeat", {
          headers: { ...JSON_HEADERS, "accept-encoding": "gzip, br" },
          body: "[10]",
        });
        assert.equal(small.headers["content-encoding"], undefined);
        const plain = await c().call("/test.Calc/repeat", { headers: JSON_HEADERS, body: "[5000]" });
        assert.equal(plain.headers["content-encoding"], undefined);
        assert.equal(plain.json().length, 5000);
      });

      it("Accept-Encoding q-values are honoured; unknown codings are skipped", async () => {
        const r = await c().call("/test.Calc/repeat", {
          headers: { ...JSON_HEADERS, "accept-encoding": "zstd, gzip;q=0.5, br;q=0.9" },
          body: "[5000]",
        });
        assert.equal(r.headers["content-encoding"], "br");
        const none = await c().call("/test.Calc/repeat", {
          headers: { ...JSON_HEADERS, "accept-encoding": "zstd, gzip;q=0" },
          body: "[5000]",
        });
        assert.equal(none.headers["content-encoding"], undefined);
      });

      it("an unknown Content-Encoding is 415, naming it and ours", async () => {
        const r = await c().call("/test.Calc/add", {
          headers: { ...JSON_HEADERS, "content-encoding": "zstd" },
          body: "[1,2]",
        });
        assert.equal(r.status, 415);
        const e = errorOf(r);
        assert.equal(e.status, 25);
        assert.match(e.message, /unsupported Content-Encoding "zstd"; supported: gzip, deflate, br, identity/);
      });

      it("a corrupt gzip body is 400, status 25", async () => {
        for (const body of [Buffer.from("definitely not gzip"), compressors.gzip(Buffer.from("[1,2]")).subarray(0, 12)]) {
          const r = await c().call("/test.Calc/add", {
            headers: { ...JSON_HEADERS, "content-encoding": "gzip" },
            body,
          });
          assert.equal(r.status, 400);
          const e = errorOf(r);
          assert.equal(e.status, 25);
          assert.match(e.message, /^invalid gzip data/);
        }
      });

      it("a body just under 4 MiB is accepted", async () => {
        const text = "y".repeat(4 * MiB - 16);
        const r = await c().call("/test.Calc/size", { headers: JSON_HEADERS, body: JSON.stringify([text]) });
        assert.equal(r.status, 200);
        assert.equal(r.json(), text.length);
      });

      it("a body over 4 MiB is 413 and the server keeps serving", async () => {
        const body = JSON.stringify(["z".repeat(4 * MiB + 10)]);
        const r = await c().call("/test.Calc/size", { headers: JSON_HEADERS, body });
        assert.equal(r.status, 413);
        assert.equal(r.headers["content-type"], "application/json");
        assert.deepEqual(errorOf(r), {
          status: 40,
          message: `request body larger than ${4 * MiB} bytes`,
          code: "resource_exhausted",
        });
        const ok = await c().call("/test.Calc/add", { headers: JSON_HEADERS, body: "[1,2]" });
        assert.equal(ok.json(), 3);
      });

      it("the 4 MiB limit applies after decompression (413) and the connection keeps serving", async () => {
        for (const enc of ["gzip", "deflate", "br"]) {
          const body = compressors[enc](Buffer.from(JSON.stringify(["z".repeat(5 * MiB)])));
          assert.ok(body.length < 64 * 1024);
          const r = await c().call("/test.Calc/size", {
            headers: { ...JSON_HEADERS, "content-encoding": enc },
            body,
          });
          assert.equal(r.status, 413, enc);
          assert.equal(errorOf(r).code, "resource_exhausted");
          assert.match(errorOf(r).message, /after decompression/);
          const ok = await c().call("/test.Calc/add", { headers: JSON_HEADERS, body: "[2,2]" });
          assert.equal(ok.json(), 4);
        }
      });
    });
  }

  it("HTTP/1.1: a declared Content-Length over the limit is refused before the body is read", async () => {
    const net = await import("node:net");
    const { port } = server.address;
    const sock = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    sock.on("data", (d) => chunks.push(d));
    sock.write(`POST /test.Calc/size HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * MiB}\r\n\r\n["`);
    // The server answers at once, then closes the connection (without reading 100 MiB).
    await new Promise<void>((resolve) =>
      sock.on("data", () => {
        if (/\}$/.test(Buffer.concat(chunks).toString())) resolve();
      }),
    );
    sock.end();
    await new Promise((r) => sock.once("close", r));
    const text = Buffer.concat(chunks).toString();
    assert.match(text, /\r\nconnection: close\r\n/i);
    assert.match(text, /^HTTP\/1\.1 413 /);
    assert.match(text, /"code":"resource_exhausted"/);
  });
});
