import * as assert from "node:assert/strict";
import * as http from "node:http";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { ServerChild } from "../robustness/child.js";
import { assertRefused, Bystander } from "./attack.js";

const BOUNDARY = "hostileBoundary7MA4YWxk";
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const MiB = 1024 * 1024;
/** The hostile preamble: no boundary in 200 MB. */
const PREAMBLE_BYTES = 200 * MiB;
const CHUNK = Buffer.alloc(256 * 1024, 0x61);

/** What a streamed upload saw: the answer, and how much had been sent when it came. */
interface Upload {
  status: number;
  body: string;
  sentWhenAnswered: number;
}

/** Streams up to `total` bytes of preamble (no Content-Length: chunked) until the server answers. */
function streamPreamble1(url: string, total: number): Promise<Upload> {
  const u = new URL("/robust.User/Upload", url);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers: { "content-type": MULTIPART }, agent: false });
    req.on("response", (res) => {
      answered = true;
      const at = sent;
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), sentWhenAnswered: at }));
      res.on("error", reject);
    });
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    const pump = () => {
      while (!answered && sent < total) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** The same over HTTP/2 (flow control paces the sender). */
function streamPreamble2(url: string, total: number): Promise<Upload> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", () => {});
    let sent = 0;
    let answered = false;
    const stream = session.request({ ":method": "POST", ":path": "/robust.User/Upload", "content-type": MULTIPART });
    const chunks: Buffer[] = [];
    let status = 0;
    let at = 0;
    stream.on("response", (h) => {
      answered = true;
      at = sent;
      status = Number(h[":status"]);
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    const done = () => {
      session.close();
      if (status) resolve({ status, body: Buffer.concat(chunks).toString(), sentWhenAnswered: at });
      else reject(new Error("the stream ended without an answer"));
    };
    stream.on("end", done);
    stream.on("error", () => {
      if (status) done();
      else reject(new Error("the stream failed without an answer"));
    });
    const pump = () => {
      while (!answered && sent < total && !stream.destroyed) {
        sent += CHUNK.length;
        if (!stream.write(CHUNK)) {
          stream.once("drain", pump);
          return;
        }
      }
      if (!answered && !stream.destroyed) stream.end();
    };
    pump();
  });
}

/**
 * Issue 22, break 6 (uncompressed half): multipart had no overall limit before its boundary: a
 * 200 MB preamble without a boundary was read in full (and answered 400 at its end). Every byte a
 * multipart body reads now counts against `maxBodyBytes` (4 MiB), preamble included: the answer
 * is 413 as soon as the limit is passed, while the sender is still sending.
 */
describe("hostile: multipart preamble without a boundary (issue 22, break 6)", () => {
  let server: ServerChild;
  before(async () => {
    server = await ServerChild.start();
  });
  after(() => server?.stop());

  for (const [version, stream] of [
    ["HTTP/1.1 chunked", streamPreamble1],
    ["HTTP/2", streamPreamble2],
  ] as const) {
    it(`${version}: a 200 MB preamble → 413 before 16 MiB of it were sent; greets beside answer`, async () => {
      const bystander = new Bystander(server.url);
      const t = performance.now();
      const up = await stream(server.url, PREAMBLE_BYTES);
      const ms = Math.round(performance.now() - t);
      assertRefused(
        { status: up.status, headers: {}, body: Buffer.from(up.body), json: () => JSON.parse(up.body), text: () => up.body },
        413,
        "resource_exhausted",
        /larger than 4194304 bytes/,
      );
      // A count, not a time (a 5 s bound was here): the answer came before 16 MiB of the 200 MB
      // were sent, so the server read no further than about its limit.
      assert.ok(up.sentWhenAnswered < 16 * MiB, `the answer came after ${Math.round(up.sentWhenAnswered / MiB)} MiB were sent (${ms} ms)`);
      await bystander.assertResponsive(2_000);
    });
  }

  it("the server is healthy after", async () => {
    await server.assertHealthy();
  });
});
