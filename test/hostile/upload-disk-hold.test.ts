import * as assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type ServerOptions, type TripleServer } from "../../src/index.js";
import { UploadService } from "../uploads/services.js";
import { type Answer, BOUNDARY, contentType, MiB, upload1, upload2 } from "../uploads/upload-client.js";
import { Bystander } from "./attack.js";

// Issue 33, break 5: uploads that send most of a spilled part fast, then a byte every few
// seconds, held the whole upload disk (maxUploadDiskBytes): every well-behaved upload got 507.
// HTTP/1.1 ones ended at requestTimeoutMs (300 s), HTTP/2 ones never (each DATA frame restarted
// the body idle timer, and no total limit applied); and one address could take all of the disk.
// Now: a minimum body rate on both HTTP versions (minBodyBytesPerSecond over bodyRateWindowMs),
// requestTimeoutMs on HTTP/2 streams, and a per-address share of the disk
// (limits.maxUploadDiskBytesPerPeer). The limits here are small so that each attack takes a
// second or two.

const KiB = 1024;
const STORED = "/test.Uploads/stored";
/** What each attacker sends at once before it starts to drip: spilled past uploadMemoryBytes. */
const FAST = 400 * KiB;
/** One byte every DRIP_MS afterwards: 10 bytes/s, far below any sane minimum rate. */
const DRIP_MS = 100;
/** How long the attack tests wait for their outcome: far past each limit, far below the 120 s file timeout. */
const WITHIN_MS = 5_000;

const FILE_HEAD = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
);
/** A whole well-behaved upload: a 300 KiB file (spilled), then the note. */
const WHOLE_UPLOAD = Buffer.concat([
  FILE_HEAD,
  Buffer.alloc(300 * KiB, 0x62),
  Buffer.from(`\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nn\r\n--${BOUNDARY}--\r\n`),
]);

/** What a slow upload got: its answer (if any), when, and whether the server ended it. */
interface Outcome {
  status: number;
  body: string;
  ms: number;
  ended: boolean;
}

/**
 * An upload that sends FAST bytes of a spilled file part, then a byte every DRIP_MS: it never
 * ends by itself. `answered` settles at the server's answer (or the end); `closed` when the
 * server ended the stream or connection, or WITHIN_MS passed; `stop()` gives up at once.
 */
class SlowUpload {
  readonly out: Outcome = { status: 0, body: "", ms: 0, ended: false };
  readonly answered: Promise<Outcome>;
  readonly closed: Promise<Outcome>;
  private readonly t0 = Date.now();
  private drip: NodeJS.Timeout | undefined;
  private give: NodeJS.Timeout | undefined;
  private onAnswer!: () => void;
  private onClose!: () => void;
  private abort: () => void = () => {};

  constructor() {
    this.answered = new Promise((r) => {
      this.onAnswer = () => r(this.out);
    });
    this.closed = new Promise((r) => {
      this.onClose = () => {
        clearInterval(this.drip);
        clearTimeout(this.give);
        this.out.ms = Date.now() - this.t0;
        this.out.ended ||= this.out.ms < WITHIN_MS;
        this.onAnswer();
        r(this.out);
      };
    });
  }

  /** Over an HTTP/2 session: one stream. */
  static h2(session: http2.ClientHttp2Session): SlowUpload {
    const up = new SlowUpload();
    const req = session.request({ ":method": "POST", ":path": STORED, "content-type": contentType() });
    req.on("response", (h) => {
      up.out.status = Number(h[":status"]);
    });
    req.on("data", (c: Buffer) => {
      up.out.body += c.toString();
    });
    req.on("end", () => up.onAnswer());
    req.on("error", () => {});
    req.on("close", () => up.onClose());
    up.abort = () => req.close(http2.constants.NGHTTP2_CANCEL);
    up.send((b) => req.writable && req.write(b));
    return up;
  }

  /** Over HTTP/1.1 (chunked), from `localAddress`: `ended` when the server closed the connection. */
  static h1(url: string, localAddress = "127.0.0.1"): SlowUpload {
    const up = new SlowUpload();
    const u = new URL(url);
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: STORED,
      method: "POST",
      agent: false,
      localAddress,
      headers: { "content-type": contentType() },
    });
    req.on("response", (res) => {
      up.out.status = res.statusCode ?? 0;
      res.on("data", (c: Buffer) => {
        up.out.body += c.toString();
      });
      res.on("end", () => up.onAnswer());
      res.on("error", () => {});
    });
    req.on("error", () => {});
    req.on("close", () => up.onClose());
    up.abort = () => req.destroy();
    up.send((b) => !req.destroyed && req.write(b));
    return up;
  }

  private send(write: (b: Buffer | string) => unknown): void {
    write(FILE_HEAD);
    write(Buffer.alloc(FAST, 0x61));
    this.drip = setInterval(() => write("a"), DRIP_MS);
    this.give = setTimeout(() => this.stop(), WITHIN_MS);
  }

  stop(): void {
    this.abort();
  }
}

/** An HTTP/2 session from `localAddress` (127.0.0.x: another peer as the server counts them). */
function sessionFrom(url: string, localAddress: string): http2.ClientHttp2Session {
  const u = new URL(url);
  const s = http2.connect(url, { createConnection: () => net.connect({ host: u.hostname, port: Number(u.port), localAddress }) });
  s.on("error", () => {});
  return s;
}

/** A well-behaved 300 KiB spilled upload over HTTP/1.1 from `localAddress` (another peer as the server counts them). */
function uploadFrom1(url: string, localAddress: string): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: STORED,
      method: "POST",
      agent: false,
      localAddress,
      headers: { "content-type": contentType() },
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers, sentAtAnswer: 0 }));
    });
    req.on("error", reject);
    req.end(WHOLE_UPLOAD);
  });
}

/** The same over an HTTP/2 session. */
function uploadOver2(session: http2.ClientHttp2Session): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ":method": "POST", ":path": STORED, "content-type": contentType() });
    let status = 0;
    let body = "";
    req.on("response", (h) => {
      status = Number(h[":status"]);
    });
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => resolve({ status, body, headers: {}, sentAtAnswer: 0 }));
    req.on("error", reject);
    req.end(WHOLE_UPLOAD);
  });
}

/** A well-behaved spilled upload, retried on 507 until it succeeds or `ms` passes: the last answer and when it came. */
async function uploadWithin(send: () => Promise<Answer>, ms: number): Promise<{ answer: Answer; ms: number; tries: number }> {
  const t0 = Date.now();
  let tries = 0;
  for (;;) {
    tries++;
    const answer = await send();
    if (answer.status !== 507 || Date.now() - t0 > ms) return { answer, ms: Date.now() - t0, tries };
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until the server's spilled bytes reach `bytes` (the attack holds its space), at most 3 s. */
async function holding(server: TripleServer, bytes: number): Promise<void> {
  for (let i = 0; i < 300 && server.uploads.used < bytes; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(server.uploads.used >= bytes, `the attack holds ${server.uploads.used} bytes, expected ${bytes}`);
}

/** Waits until nothing is spilled any more, at most 3 s. */
async function released(server: TripleServer, dir?: string): Promise<void> {
  const busy = () => server.uploads.used > 0 || (dir !== undefined && readdirSync(dir).length > 0);
  for (let i = 0; i < 300 && busy(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(server.uploads.used, 0, "spilled bytes still held after the attack ended");
  if (dir !== undefined) assert.deepEqual(readdirSync(dir), [], "temp files left behind");
}

async function start(options: ServerOptions): Promise<{ server: TripleServer; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "triple-hold-"));
  const server = createServer({ services: [new GreetServiceImpl(), new UploadService()], ...options, uploads: { dir, ...options.uploads } });
  await server.listen({ port: 0 });
  return { server, dir };
}

const SMALL_DISK = { maxDiskBytes: 2 * MiB, memoryBytes: 64 * KiB };
/** One address's share of SMALL_DISK at the default (a quarter). */
const SHARE = 512 * KiB;

describe("hostile: slow uploads holding the upload disk (break 5)", () => {
  describe("the minimum body rate (one address may take the whole disk here)", () => {
    let server: TripleServer;
    let dir: string;
    before(async () => {
      ({ server, dir } = await start({ uploads: { ...SMALL_DISK, maxDiskBytesPerPeer: 2 * MiB }, minBodyBytesPerSecond: 1024, bodyRateWindowMs: 600 }));
    });
    after(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("HTTP/2: five streams on one connection fill the disk, then drip; each is cut with 408 within the rate window, and a well-behaved upload gets through", async () => {
      const bystander = new Bystander(server.url, 3_000);
      const session = http2.connect(server.url);
      session.on("error", () => {});
      const attacks = Array.from({ length: 5 }, () => SlowUpload.h2(session));
      await holding(server, 5 * FAST);
      // The disk is full: a 300 KiB spilled upload does not fit until the drips are cut.
      const ok = await uploadWithin(
        () => upload2(server.url, STORED, { files: [{ name: "file", size: 300 * KiB }], fields: [{ name: "note", value: "n" }], filesFirst: true }),
        3_000,
      );
      const outcomes = await Promise.all(attacks.map((a) => a.closed));
      session.close();
      assert.equal(ok.answer.status, 200, `a well-behaved upload after ${ok.tries} tries in ${ok.ms} ms: ${ok.answer.status} ${ok.answer.body}`);
      for (const o of outcomes) {
        assert.equal(o.ended, true, "a dripping upload is still open");
        assert.equal(o.status, 408, JSON.stringify(o));
        assert.match(o.body, /deadline_exceeded/);
        // No bound of its own (was 4 s): a 408 naming the rate can only come from the rate check,
        // and `ended` says it came before the test's own give-up at WITHIN_MS.
        assert.match(o.body, /minBodyBytesPerSecond/, `cut after ${o.ms} ms`);
      }
      await released(server, dir);
      await bystander.assertResponsive(2_000);
    });

    it("HTTP/1.1: a dripping upload is cut with 408 and its connection closed, long before requestTimeoutMs", async () => {
      const bystander = new Bystander(server.url, 3_000);
      const o = await SlowUpload.h1(server.url).closed;
      assert.equal(o.ended, true, "the dripping upload's connection is still open");
      assert.equal(o.status, 408, JSON.stringify(o));
      // As above: the 408 names the rate (requestTimeoutMs is 300 s), before the test's give-up.
      assert.match(o.body, /minBodyBytesPerSecond/, `cut after ${o.ms} ms`);
      await released(server);
      await bystander.assertResponsive(2_000);
    });
  });

  describe("requestTimeoutMs on HTTP/2 (rate check off)", () => {
    let server: TripleServer;
    let dir: string;
    before(async () => {
      ({ server, dir } = await start({ uploads: SMALL_DISK, minBodyBytesPerSecond: 0, requestTimeoutMs: 1_500, headersTimeoutMs: 1_000 }));
    });
    after(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("a stream that keeps dripping (so the body idle limit never fires) is answered 408 naming requestTimeoutMs, as HTTP/1.1 would be", async () => {
      const bystander = new Bystander(server.url, 3_000);
      const session = http2.connect(server.url);
      session.on("error", () => {});
      const o = await SlowUpload.h2(session).closed;
      session.close();
      assert.equal(o.ended, true, "the stream is still open");
      assert.equal(o.status, 408, JSON.stringify(o));
      assert.match(o.body, /requestTimeoutMs/);
      // Not before requestTimeoutMs (1.5 s); the 408 naming it and `ended` (before the test's
      // give-up at WITHIN_MS) bound it from above, in place of a 3 s wall bound.
      assert.ok(o.ms >= 1_400, `cut after ${o.ms} ms`);
      await released(server);
      await bystander.assertResponsive(2_000);
    });
  });

  describe("one address's share of the disk (rate check off)", () => {
    let server: TripleServer;
    let dir: string;
    before(async () => {
      // The share is left at its default: a quarter of maxUploadDiskBytes (512 KiB here).
      ({ server, dir } = await start({ uploads: SMALL_DISK, minBodyBytesPerSecond: 0 }));
    });
    after(async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("five slow uploads from 127.0.0.1 (enough to fill the disk) hold one share, the rest get 507 naming it; an upload from 127.0.0.2 gets through at once", async () => {
      const bystander = new Bystander(server.url, 3_000);
      const session = sessionFrom(server.url, "127.0.0.1");
      const attacks = [SlowUpload.h2(session)];
      await holding(server, FAST);
      let most = 0;
      const sampler = setInterval(() => {
        most = Math.max(most, server.uploads.used);
      }, 5);
      for (let i = 0; i < 4; i++) attacks.push(SlowUpload.h2(session));
      await Promise.all(attacks.slice(1).map((a) => a.answered));
      clearInterval(sampler);
      assert.ok(most <= SHARE, `127.0.0.1 held ${most} bytes, over its share of ${SHARE}`);
      const other = sessionFrom(server.url, "127.0.0.2");
      const ok = await uploadWithin(() => uploadOver2(other), 1_000);
      assert.equal(ok.answer.status, 200, `the other address's upload after ${ok.tries} tries: ${ok.answer.status} ${ok.answer.body}`);
      assert.equal(ok.tries, 1, "the other address's upload was refused first");
      other.close();
      const refused = attacks.filter((a) => a.out.status === 507).map((a) => a.out);
      for (const a of attacks) a.stop();
      const outcomes = await Promise.all(attacks.map((a) => a.closed));
      session.close();
      assert.equal(outcomes.length, 5);
      // The four late ones at least (the first may lose its share too: a drip byte that comes while the others' bytes are counted).
      assert.ok(refused.length >= 4, JSON.stringify(outcomes.map((o) => [o.status, o.body.slice(0, 120)])));
      for (const o of refused) assert.match(o.body, /uploads\.maxDiskBytesPerPeer/);
      await released(server);
      await bystander.assertResponsive(2_000);
    });

    it("HTTP/1.1 counts the same share per address; other addresses are served", async () => {
      const bystander = new Bystander(server.url, 3_000);
      const attacks = [SlowUpload.h1(server.url)];
      await holding(server, FAST);
      attacks.push(SlowUpload.h1(server.url));
      const second = await attacks[1].answered;
      assert.equal(second.status, 507, JSON.stringify(second));
      assert.match(second.body, /uploads\.maxDiskBytesPerPeer/);
      const mine = await upload1(server.url, STORED, { files: [{ name: "file", size: MiB }], fields: [{ name: "note", value: "n" }], filesFirst: true });
      assert.equal(mine.status, 507, "127.0.0.1 is over its share");
      const theirs = await uploadFrom1(server.url, "127.0.0.2");
      assert.equal(theirs.status, 200, theirs.body);
      for (const a of attacks) a.stop();
      await Promise.all(attacks.map((a) => a.closed));
      await released(server);
      await bystander.assertResponsive(2_000);
    });
  });
});
