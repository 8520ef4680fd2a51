import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { H2 } from "../helpers/http.js";
import { ServerChild, whileGreeting } from "./child.js";
import { FLAG_END_HEADERS, FLAG_END_STREAM, FrameType, frame, greetHeaders, H2Error, hpack, RawH2 } from "./raw-h2.js";

/** A short idle timeout, so that lingering connections are seen to close within the test. */
const IDLE_MS = 2000;

/** Malformed HTTP/2 frames and headers on a raw socket: each gets the RFC 9113 answer, nothing else breaks. */
describe("robustness: malformed HTTP/2 frames and headers", () => {
  let server: ServerChild;
  const conns: RawH2[] = [];
  const open = async (handshake = true) => {
    const c = await RawH2.connect(server.port, handshake);
    conns.push(c);
    return c;
  };

  before(async () => {
    server = await ServerChild.start({ idleTimeoutMs: IDLE_MS });
  });
  after(async () => {
    for (const c of conns) c.destroy();
    await server.stop();
  });

  /** Sends `bytes` on a fresh connection and expects GOAWAY with `code` (connection error). */
  async function expectGoAway(bytes: Buffer, ...codes: number[]): Promise<void> {
    const c = await open();
    c.write(bytes);
    assert.ok(await c.waitGoneOrGoAway(), "the server neither sent GOAWAY nor closed the connection");
    assert.ok(codes.includes(c.goAwayCode ?? -1), `GOAWAY code ${c.goAwayCode}, expected one of ${codes}`);
  }

  // Node's http2 reports some nghttp2 connection errors as INTERNAL_ERROR (it destroys the
  // session with the error); either way the connection ends with a GOAWAY.
  const PROTOCOL = [H2Error.PROTOCOL_ERROR, H2Error.INTERNAL_ERROR];

  it("a SETTINGS frame whose length is not a multiple of 6 → GOAWAY FRAME_SIZE_ERROR", async () => {
    await expectGoAway(frame(FrameType.SETTINGS, 0, 0, Buffer.alloc(5)), H2Error.FRAME_SIZE_ERROR);
  });

  it("a frame larger than SETTINGS_MAX_FRAME_SIZE → GOAWAY FRAME_SIZE_ERROR", async () => {
    await expectGoAway(frame(FrameType.DATA, 0, 1, Buffer.alloc(20_000)), H2Error.FRAME_SIZE_ERROR);
  });

  it("a PING that is not 8 bytes → GOAWAY FRAME_SIZE_ERROR", async () => {
    await expectGoAway(frame(FrameType.PING, 0, 0, Buffer.alloc(3)), H2Error.FRAME_SIZE_ERROR);
  });

  it("DATA on stream 0 → GOAWAY PROTOCOL_ERROR", async () => {
    await expectGoAway(frame(FrameType.DATA, 0, 0, Buffer.from("hello")), H2Error.PROTOCOL_ERROR);
  });

  it("HEADERS on an even (server-initiated) stream id → GOAWAY PROTOCOL_ERROR", async () => {
    const block = hpack(greetHeaders(`127.0.0.1:${server.port}`));
    await expectGoAway(frame(FrameType.HEADERS, FLAG_END_HEADERS, 2, block), ...PROTOCOL);
  });

  it("WINDOW_UPDATE with a zero increment on the connection → GOAWAY PROTOCOL_ERROR", async () => {
    await expectGoAway(frame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(4)), ...PROTOCOL);
  });

  it("HEADERS with an invalid HPACK block (index 0, index past the table) → GOAWAY COMPRESSION_ERROR", async () => {
    await expectGoAway(frame(FrameType.HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, Buffer.from([0x80])), H2Error.COMPRESSION_ERROR);
    await expectGoAway(frame(FrameType.HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 1, Buffer.from([0xff, 0xff, 0xff, 0x7f])), H2Error.COMPRESSION_ERROR);
  });

  it("a CONTINUATION without a preceding HEADERS → GOAWAY PROTOCOL_ERROR", async () => {
    await expectGoAway(frame(FrameType.CONTINUATION, FLAG_END_HEADERS, 1, hpack([["a", "b"]])), H2Error.PROTOCOL_ERROR);
  });

  it("a connection that got a fatal GOAWAY is closed by the idle timeout at the latest", async () => {
    // Node's http2 stops reading after nghttp2 queues a fatal GOAWAY but does not close the
    // socket itself (RFC 9113 §5.4.1 says it MUST); the idle timeout bounds how long it lingers.
    const c = await open();
    c.write(frame(FrameType.DATA, 0, 0, Buffer.from("x")));
    assert.ok(await c.waitFor(() => c.goAwayCode !== undefined));
    assert.ok(await c.waitFor(() => c.closed, IDLE_MS + 3000), "connection still open after the idle timeout");
  });

  it("garbage instead of a SETTINGS frame after the preface → connection closed", async () => {
    const c = await open(false);
    c.write(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), Buffer.from("this is not a frame at all, not at all")]));
    assert.ok(await c.waitGoneOrGoAway(), "connection left open after a garbage first frame");
  });

  it("malformed request headers (uppercase name, connection header, missing :path) → stream reset, connection kept", async () => {
    const c = await open();
    const auth = `127.0.0.1:${server.port}`;
    const bad: [string, string][][] = [
      [...greetHeaders(auth), ["X-Upper", "1"]],
      [...greetHeaders(auth), ["connection", "keep-alive"]],
      greetHeaders(auth).filter(([n]) => n !== ":path"),
    ];
    let id = 1;
    const ids: number[] = [];
    for (const hs of bad) {
      c.write(frame(FrameType.HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, id, hpack(hs)));
      ids.push(id);
      id += 2;
    }
    // A well-formed request on the same connection still gets its answer.
    c.write(frame(FrameType.HEADERS, FLAG_END_HEADERS, id, hpack(greetHeaders(auth))));
    c.write(frame(FrameType.DATA, FLAG_END_STREAM, id, Buffer.from('{"name":"triple"}')));
    const good = id;
    assert.ok(
      await c.waitFor(() => ids.every((i) => c.rstCodes(i).length > 0) && c.frames.some((f) => f.type === FrameType.DATA && f.streamId === good)),
      `frames: ${JSON.stringify(c.frames.map((f) => [f.type, f.streamId]))}`,
    );
    for (const i of ids) assert.equal(c.rstCodes(i)[0], H2Error.PROTOCOL_ERROR);
    const body = c.frames
      .filter((f) => f.type === FrameType.DATA && f.streamId === good)
      .map((f) => f.payload.toString())
      .join("");
    assert.deepEqual(JSON.parse(body), { greeting: "triple" });
  });

  it("a rapid-reset burst (HEADERS + RST_STREAM × 2000) is absorbed; the server stays healthy", async () => {
    await whileGreeting(server.url, async () => {
      const c = await open();
      const block = hpack(greetHeaders(`127.0.0.1:${server.port}`));
      const parts: Buffer[] = [];
      for (let i = 0, id = 1; i < 2000; i++, id += 2) {
        parts.push(frame(FrameType.HEADERS, FLAG_END_HEADERS, id, block));
        parts.push(frame(FrameType.RST_STREAM, 0, id, Buffer.from([0, 0, 0, H2Error.CANCEL])));
      }
      c.write(Buffer.concat(parts));
      await c.waitGoneOrGoAway(1500);
    });
    await server.assertHealthy();
  });

  it("a SETTINGS flood and a PING flood are absorbed; the server stays healthy", async () => {
    await whileGreeting(server.url, async () => {
      const settings = await open();
      const pings = await open();
      // Never read the ACKs: a peer that floods and does not read must not grow the server's queue.
      settings.socket.pause();
      pings.socket.pause();
      const s = frame(FrameType.SETTINGS, 0, 0, Buffer.from([0x00, 0x03, 0x00, 0x00, 0x00, 0x64]));
      const p = frame(FrameType.PING, 0, 0, Buffer.alloc(8));
      settings.write(Buffer.concat(Array.from({ length: 20_000 }, () => s)));
      pings.write(Buffer.concat(Array.from({ length: 50_000 }, () => p)));
      await new Promise((r) => setTimeout(r, 1000));
    });
    await server.assertHealthy();
  });

  it("a request with more headers than the limit → 431 over HTTP/2; the connection stays usable", async () => {
    const h2 = new H2(server.url);
    try {
      const headers: Record<string, string> = { "content-type": "application/json" };
      for (let i = 0; i < 150; i++) headers[`x-h${i}`] = "v";
      const r = await h2.request("/greet.GreetService/Greet", { headers, body: '{"name":"triple"}' });
      assert.equal(r.status, 431);
      assert.equal(r.json().code, "resource_exhausted");
      const ok = await h2.request("/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' });
      assert.equal(ok.status, 200);
    } finally {
      h2.close();
    }
  });

  it("a header list over maxHeaderBytes → 431, even before the client acknowledged SETTINGS", async () => {
    const big = { "content-type": "application/json", "x-big": "a".repeat(40_000) };
    // A fresh session's first request races our SETTINGS: the transport measures it itself.
    const h2 = new H2(server.url);
    try {
      const r = await h2.request("/greet.GreetService/Greet", { headers: big, body: '{"name":"triple"}' });
      assert.equal(r.status, 431);
      assert.deepEqual(r.json(), {
        status: 40,
        message: "request header fields too large: more than 16384 bytes",
        code: "resource_exhausted",
      });
      // Once SETTINGS are acknowledged nghttp2 refuses the header block itself (RST_STREAM).
      const second = await h2.request("/greet.GreetService/Greet", { headers: big, body: "{}" }).then(
        (x) => String(x.status),
        (e: Error) => e.message,
      );
      assert.match(second, /^431$|ENHANCE_YOUR_CALM/);
      const ok = await h2.request("/greet.GreetService/Greet", { headers: { "content-type": "application/json" }, body: '{"name":"triple"}' });
      assert.equal(ok.status, 200);
    } finally {
      h2.close();
    }
  });

  it("a header list over maxHeaderBytes on a raw first stream (no SETTINGS ACK at all) → 431", async () => {
    const c = await RawH2.connect(server.port, false);
    conns.push(c);
    c.write(Buffer.concat([Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), frame(FrameType.SETTINGS, 0, 0)]));
    const fields: [string, string][] = [...greetHeaders(`127.0.0.1:${server.port}`)];
    for (let i = 0; i < 200; i++) fields.push([`x-f${i}`, "b".repeat(100)]);
    // 26 KB of headers: a HEADERS frame and CONTINUATIONs, each within the 16 KiB frame size.
    const block = hpack(fields);
    c.write(frame(FrameType.HEADERS, FLAG_END_STREAM, 1, block.subarray(0, 16_000)));
    c.write(frame(FrameType.CONTINUATION, FLAG_END_HEADERS, 1, block.subarray(16_000)));
    assert.ok(await c.waitFor(() => c.frames.some((f) => f.type === FrameType.HEADERS && f.streamId === 1) || c.closed));
    const hdr = c.frames.find((f) => f.type === FrameType.HEADERS && f.streamId === 1);
    assert.ok(hdr, "no response HEADERS");
    // HPACK static table index 8 is `:status 200`; 431 is sent as a literal with the digits in it.
    assert.ok(hdr.payload.includes(Buffer.from("431")), "the response is not a 431");
  });

  it("the server survived every malformed frame", async () => {
    await server.assertHealthy();
  });
});
