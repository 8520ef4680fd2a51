import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createHandler, createServer, type TripleServer } from "../../src/index.js";
import { peerKey } from "../../src/codec/upload-store.js";
import { checkedLimits } from "../../src/runtime/limits.js";
import { UploadService } from "../uploads/services.js";
import { MiB, upload1, upload2 } from "../uploads/upload-client.js";

// What the minimum body rate, the HTTP/2 whole-request limit and the per-address upload share
// (issue 33, break 5; the attacks are in test/hostile/upload-disk-hold.test.ts) must leave alone,
// and how their options are checked.

/** One gRPC message of the greet service in JSON (application/grpc+json). */
function frame(name: string): Buffer {
  const json = Buffer.from(JSON.stringify({ name }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

describe("request body rules: what they leave alone", () => {
  let server: TripleServer;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "triple-rate-"));
    server = createServer({
      services: [new GreetServiceImpl(), new UploadService()],
      uploads: { dir },
      minBodyBytesPerSecond: 64 * 1024,
      bodyRateWindowMs: 400,
      requestTimeoutMs: 3_000,
      headersTimeoutMs: 1_000,
    });
    await server.listen({ port: 0 });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a gRPC client stream slower than the rate and longer than requestTimeoutMs is served (its request is a stream)", async () => {
    const session = http2.connect(server.url);
    session.on("error", () => {});
    try {
      const req = session.request({
        ":method": "POST",
        ":path": "/greet.GreetService/GreetClientStream",
        "content-type": "application/grpc+json",
        te: "trailers",
      });
      let body = Buffer.alloc(0);
      let trailers: http2.IncomingHttpHeaders = {};
      req.on("data", (c: Buffer) => {
        body = Buffer.concat([body, c]);
      });
      req.on("trailers", (t) => {
        trailers = t;
      });
      const closed = new Promise((r) => req.on("close", r));
      const names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
      for (const n of names) {
        req.write(frame(n));
        await new Promise((r) => setTimeout(r, 350));
      }
      req.end();
      await closed;
      assert.equal(trailers["grpc-status"], "0", JSON.stringify(trailers));
      assert.deepEqual(JSON.parse(body.subarray(5).toString()), { greeting: names.join(", ") });
    } finally {
      session.close();
    }
  });

  it("a large upload the handler reads slowly (the server pauses the body) is not cut: paused time is not the client's", async () => {
    for (const send of [upload1, upload2]) {
      const a = await send(server.url, "/test.Uploads/slowRead", { fields: [{ name: "label", value: "x" }], files: [{ name: "file", size: 3 * MiB }] });
      assert.equal(a.status, 200, a.body);
      assert.equal(JSON.parse(a.body).size, 3 * MiB);
    }
  });

  it("uploads at full speed are served on both versions", async () => {
    for (const send of [upload1, upload2]) {
      const a = await send(server.url, "/test.Uploads/stored", {
        files: [{ name: "file", size: 4 * MiB }],
        fields: [{ name: "note", value: "n" }],
        filesFirst: true,
      });
      assert.equal(a.status, 200, a.body);
    }
  });
});

describe("request body rules: options", () => {
  it("minBodyBytesPerSecond: NaN, negative, Infinity, a string → TypeError naming it; 0 and a number are taken", () => {
    for (const [v, shown] of [
      [Number.NaN, "NaN"],
      [-1, "-1"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      ["240", '"240"'],
    ] as const) {
      assert.throws(
        () => createServer({ minBodyBytesPerSecond: v as unknown as number }),
        (e: unknown) =>
          e instanceof TypeError &&
          e.message === `createServer: minBodyBytesPerSecond must be a finite number of bytes per second >= 0 (0 switches the check off), got ${shown}`,
        String(v),
      );
    }
    assert.doesNotThrow(() => createServer({ minBodyBytesPerSecond: 0 }));
    assert.doesNotThrow(() => createServer({ minBodyBytesPerSecond: 1000.5 }));
  });

  it("bodyRateWindowMs is a timeout like the others: a fraction or a negative number → TypeError naming it", () => {
    assert.throws(() => createServer({ bodyRateWindowMs: 1.5 }), /createServer: bodyRateWindowMs must be a whole number of milliseconds/);
    assert.throws(
      () => createServer({ bodyRateWindowMs: -1 }),
      /createServer: bodyRateWindowMs must be a whole number of milliseconds from 0 to 2147483647 \(0 switches the rate check off\), got -1/,
    );
  });

  it("a mounted handler refuses them: the port's owner times its requests", () => {
    assert.throws(() => createHandler({ minBodyBytesPerSecond: 100 } as never), /minBodyBytesPerSecond is a setting of the server that owns the port/);
    assert.throws(() => createHandler({ bodyRateWindowMs: 100 } as never), /bodyRateWindowMs is a setting of the server that owns the port/);
  });

  it("uploads.maxDiskBytesPerPeer: a quarter of uploads.maxDiskBytes unless given", () => {
    assert.equal(checkedLimits(undefined, undefined, "t").maxUploadDiskBytesPerPeer, 2 * 1024 * MiB);
    assert.equal(checkedLimits(undefined, { maxDiskBytes: 100 * MiB }, "t").maxUploadDiskBytesPerPeer, 25 * MiB);
    assert.equal(checkedLimits(undefined, { maxDiskBytes: Number.POSITIVE_INFINITY }, "t").maxUploadDiskBytesPerPeer, Number.POSITIVE_INFINITY);
    assert.equal(checkedLimits(undefined, { maxDiskBytesPerPeer: 5 }, "t").maxUploadDiskBytesPerPeer, 5);
  });

  it("the disk share is counted per IPv4 address and per IPv6 /64", () => {
    assert.equal(peerKey("10.1.2.3"), "10.1.2.3");
    assert.equal(peerKey("::ffff:10.1.2.3"), "10.1.2.3");
    assert.equal(peerKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
    assert.equal(peerKey("2001:db8:1:2:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64");
    assert.equal(peerKey("2001:db8::1"), "2001:db8:0:0::/64");
    assert.equal(peerKey("::1"), "0:0:0:0::/64");
    assert.equal(peerKey(""), "");
  });
});
