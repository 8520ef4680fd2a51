import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Code } from "../../src/protocol/code.js";
import { GRPC_COMPRESSIONS } from "../../src/protocol/compression.js";
import type { RpcError } from "../../src/protocol/rpc-error.js";
import { encodeFrame } from "../../src/message/framing.js";
import { type MessageSink, MessageReader } from "../../src/message/message-reader.js";

/** A sink that records messages (copied) and every end call. */
function sink(): MessageSink & { messages: string[]; ends: Array<RpcError | undefined> } {
  const messages: string[] = [];
  const ends: Array<RpcError | undefined> = [];
  return {
    messages,
    ends,
    onMessage: (p) => messages.push(Buffer.from(p).toString("latin1")),
    onMessagesEnd: (e) => ends.push(e),
  };
}

const gzip = GRPC_COMPRESSIONS.get("gzip")!;
const frames = (...msgs: string[]) => Buffer.concat(msgs.map((m) => encodeFrame(Buffer.from(m, "latin1"))));

describe("MessageReader", () => {
  it("whole frames in one chunk are delivered in order, then the end without error", () => {
    const s = sink();
    const r = new MessageReader(1 << 20, undefined, s);
    r.onBodyData(frames("one", "", "three"));
    assert.deepEqual(s.messages, ["one", "", "three"]);
    assert.equal(r.truncated, false);
    r.onBodyEnd();
    assert.deepEqual(s.ends, [undefined]);
    assert.equal(r.ended, true);
  });

  it("frames split across chunks at every offset decode the same", () => {
    const buf = frames("alpha", "beta", "", "gamma");
    for (let i = 0; i <= buf.length; i++) {
      for (let j = i; j <= buf.length; j++) {
        const s = sink();
        const r = new MessageReader(1 << 20, undefined, s);
        for (const c of [buf.subarray(0, i), buf.subarray(i, j), buf.subarray(j)]) r.onBodyData(c);
        r.onBodyEnd();
        assert.deepEqual(s.messages, ["alpha", "beta", "", "gamma"], `cuts ${i}, ${j}`);
        assert.deepEqual(s.ends, [undefined], `cuts ${i}, ${j}`);
      }
    }
  });

  it("property: any chunking of any messages gives the same messages", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary-ascii", maxLength: 30 }), { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 8 }), (msgs, rawCuts) => {
        const buf = frames(...msgs);
        const cuts = rawCuts.map((c) => c % (buf.length + 1)).sort((a, b) => a - b);
        const s = sink();
        const r = new MessageReader(1 << 20, undefined, s);
        let prev = 0;
        for (const c of [...cuts, buf.length]) {
          r.onBodyData(buf.subarray(prev, c));
          prev = c;
        }
        r.onBodyEnd();
        assert.deepEqual(s.messages, msgs);
        assert.deepEqual(s.ends, [undefined]);
      }),
    );
  });

  it("a truncated stream ends with internal, mentioning 'truncated'", () => {
    for (const cut of [1, 4, 5, 7]) {
      const s = sink();
      const r = new MessageReader(1 << 20, undefined, s);
      const buf = frames("ok", "partial");
      r.onBodyData(buf.subarray(0, 7 + cut));
      assert.equal(r.truncated, true, `cut ${cut}`);
      r.onBodyEnd();
      assert.deepEqual(s.messages, ["ok"]);
      assert.equal(s.ends.length, 1);
      assert.equal(s.ends[0]?.code, Code.Internal);
      assert.match(s.ends[0]!.message, /truncated/);
    }
  });

  it("a compressed flag without a compression is an error mentioning grpc-encoding", () => {
    const s = sink();
    const r = new MessageReader(1 << 20, undefined, s);
    r.onBodyData(encodeFrame(gzip.compress(Buffer.from("zipped")), true));
    assert.deepEqual(s.messages, []);
    assert.equal(s.ends.length, 1);
    assert.equal(s.ends[0]?.code, Code.Internal);
    assert.match(s.ends[0]!.message, /grpc-encoding/);
    // Ended: later data and the body's end change nothing.
    r.onBodyData(frames("more"));
    r.onBodyEnd();
    assert.deepEqual(s.messages, []);
    assert.equal(s.ends.length, 1);
  });

  it("a gzip-compressed frame with the gzip compression decodes", () => {
    const s = sink();
    const r = new MessageReader(1 << 20, gzip, s);
    const payload = "compressed message ".repeat(50);
    r.onBodyData(Buffer.concat([encodeFrame(gzip.compress(Buffer.from(payload)), true), frames("plain")]));
    r.onBodyEnd();
    assert.deepEqual(s.messages, [payload, "plain"]);
    assert.deepEqual(s.ends, [undefined]);
  });

  it("a gzip frame split across chunks decodes too", () => {
    const s = sink();
    const r = new MessageReader(1 << 20, gzip, s);
    const f = encodeFrame(gzip.compress(Buffer.from("split and zipped")), true);
    r.onBodyData(f.subarray(0, 3));
    r.onBodyData(f.subarray(3, 12));
    r.onBodyData(f.subarray(12));
    r.onBodyEnd();
    assert.deepEqual(s.messages, ["split and zipped"]);
  });

  it("corrupt compressed data is internal (not invalid_argument)", () => {
    const s = sink();
    const r = new MessageReader(1 << 20, gzip, s);
    r.onBodyData(encodeFrame(Buffer.from("not gzip at all"), true));
    assert.equal(s.ends[0]?.code, Code.Internal);
  });

  it("a message over the limit ends the stream with resource_exhausted, before and after decompression", () => {
    const s = sink();
    new MessageReader(10, undefined, s).onBodyData(frames("01234567890"));
    assert.equal(s.ends[0]?.code, Code.ResourceExhausted);
    assert.deepEqual(s.messages, []);

    const z = sink();
    new MessageReader(100, gzip, z).onBodyData(encodeFrame(gzip.compress(Buffer.alloc(10_000)), true));
    assert.equal(z.ends[0]?.code, Code.ResourceExhausted);
    assert.deepEqual(z.messages, []);
  });

  it("bad flag bits end the stream with internal", () => {
    const s = sink();
    new MessageReader(100, undefined, s).onBodyData(Buffer.from([0x04, 0, 0, 0, 1, 65]));
    assert.equal(s.ends[0]?.code, Code.Internal);
  });

  it("a sink that throws ends the stream with its error, once", () => {
    const ends: Array<RpcError | undefined> = [];
    let n = 0;
    const r = new MessageReader(100, undefined, {
      onMessage: () => {
        n++;
        throw new Error("handler refused");
      },
      onMessagesEnd: (e) => ends.push(e),
    });
    r.onBodyData(frames("a", "b"));
    r.onBodyEnd();
    assert.equal(n, 1);
    assert.equal(ends.length, 1);
    assert.match(ends[0]!.message, /handler refused/);
  });

  it("a reset stream ends with cancelled; abandon() stops delivery", () => {
    const s = sink();
    const r = new MessageReader(100, undefined, s);
    r.onBodyError();
    assert.equal(s.ends[0]?.code, Code.Cancelled);

    const a = sink();
    const r2 = new MessageReader(100, undefined, a);
    r2.abandon();
    r2.onBodyData(frames("x"));
    assert.deepEqual(a.messages, []);
  });
});
