import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { Code } from "../../src/protocol/code.js";
import { RpcError } from "../../src/protocol/rpc-error.js";
import { encodeFrame, FLAG_COMPRESSED, FrameDecoder } from "../../src/message/framing.js";

interface Frame {
  flags: number;
  data: Buffer;
}

/** A FrameTarget that copies what it receives (the decoder may hand out views of its chunks). */
function collector(): { frames: Frame[]; frame(flags: number, data: Buffer): void } {
  const frames: Frame[] = [];
  return { frames, frame: (flags, data) => frames.push({ flags, data: Buffer.from(data) }) };
}

function wire(frames: readonly Frame[]): Buffer {
  return Buffer.concat(frames.map((f) => encodeFrame(f.data, (f.flags & FLAG_COMPRESSED) !== 0)));
}

/** Feeds `buf` cut at the given offsets into a fresh decoder; returns what came out. */
function decodeSplit(buf: Buffer, cuts: readonly number[], maxBytes = 1 << 20): Frame[] {
  const d = new FrameDecoder(maxBytes);
  const out = collector();
  let prev = 0;
  for (const c of [...cuts, buf.length]) {
    d.push(buf.subarray(prev, c), out);
    prev = c;
  }
  assert.equal(d.pending, false, "nothing pending after whole frames");
  return out.frames;
}

const FRAMES: Frame[] = [
  { flags: 0, data: Buffer.from("hello") },
  { flags: 0, data: Buffer.alloc(0) },
  { flags: FLAG_COMPRESSED, data: Buffer.from([1, 2, 3, 4, 5, 6, 7]) },
  { flags: 0, data: Buffer.from("x") },
];

describe("FrameDecoder", () => {
  it("encodeFrame: flag byte, 4-byte big-endian length, payload", () => {
    assert.deepEqual([...encodeFrame(Buffer.from("ab"))], [0, 0, 0, 0, 2, 97, 98]);
    assert.deepEqual([...encodeFrame(Buffer.from("ab"), true)], [1, 0, 0, 0, 2, 97, 98]);
  });

  it("several frames packed in one chunk come out in order", () => {
    assert.deepEqual(decodeSplit(wire(FRAMES), []), FRAMES);
  });

  it("frames split at every byte boundary decode the same", () => {
    const buf = wire(FRAMES);
    for (let i = 0; i <= buf.length; i++) assert.deepEqual(decodeSplit(buf, [i]), FRAMES, `cut at ${i}`);
    for (let i = 0; i <= buf.length; i++) {
      for (let j = i; j <= buf.length; j++) assert.deepEqual(decodeSplit(buf, [i, j]), FRAMES, `cut at ${i}, ${j}`);
    }
  });

  it("one byte at a time", () => {
    const buf = wire(FRAMES);
    assert.deepEqual(
      decodeSplit(
        buf,
        Array.from({ length: buf.length }, (_, i) => i),
      ),
      FRAMES,
    );
  });

  it("a zero-length frame is delivered as an empty message", () => {
    const out = collector();
    new FrameDecoder(100).push(Buffer.from([0, 0, 0, 0, 0]), out);
    assert.equal(out.frames.length, 1);
    assert.equal(out.frames[0].flags, 0);
    assert.equal(out.frames[0].data.length, 0);
  });

  it("a length over the limit throws resource_exhausted (413) as soon as the header is seen", () => {
    const d = new FrameDecoder(10);
    const out = collector();
    // Only the header: the decoder must not wait for (or buffer) the 4 GiB it announces.
    assert.throws(
      () => d.push(Buffer.from([0, 0xff, 0xff, 0xff, 0xff]), out),
      (e: unknown) => e instanceof RpcError && e.code === Code.ResourceExhausted && e.httpStatus === 413,
    );
    assert.equal(out.frames.length, 0);
    // Exactly the limit is fine, one more is not.
    const ok = collector();
    new FrameDecoder(10).push(encodeFrame(Buffer.alloc(10)), ok);
    assert.equal(ok.frames.length, 1);
    assert.throws(() => new FrameDecoder(10).push(Buffer.from([0, 0, 0, 0, 11]), collector()), RpcError);
  });

  it("the limit is checked when the header arrives split too", () => {
    const d = new FrameDecoder(10);
    const out = collector();
    d.push(Buffer.from([0, 0, 0]), out);
    assert.throws(
      () => d.push(Buffer.from([1, 0]), out),
      (e: unknown) => e instanceof RpcError && e.code === Code.ResourceExhausted,
    );
  });

  it("flag bits other than bit 0 throw internal", () => {
    for (const flags of [0x02, 0x03, 0x80, 0xff]) {
      assert.throws(
        () => new FrameDecoder(100).push(Buffer.from([flags, 0, 0, 0, 1, 9]), collector()),
        (e: unknown) => e instanceof RpcError && e.code === Code.Internal && /flags/.test(e.message),
        `flags 0x${flags.toString(16)}`,
      );
    }
    assert.doesNotThrow(() => FrameDecoder.check(FLAG_COMPRESSED, 0, 0));
  });

  it("pending is true mid-frame, false between frames", () => {
    const d = new FrameDecoder(100);
    const out = collector();
    assert.equal(d.pending, false);
    const f = encodeFrame(Buffer.from("abcdef"));
    d.push(f.subarray(0, 2), out);
    assert.equal(d.pending, true, "inside the header");
    d.push(f.subarray(2, 5), out);
    assert.equal(d.pending, true, "header read, payload missing");
    d.push(f.subarray(5, 8), out);
    assert.equal(d.pending, true, "half the payload");
    assert.equal(out.frames.length, 0);
    d.push(f.subarray(8), out);
    assert.equal(d.pending, false);
    assert.deepEqual(out.frames, [{ flags: 0, data: Buffer.from("abcdef") }]);
  });

  it("property: any split of any sequence of frames decodes to the same frames", () => {
    const frame = fc
      .tuple(fc.constantFrom(0, FLAG_COMPRESSED), fc.uint8Array({ maxLength: 40 }))
      .map(([flags, data]): Frame => ({ flags, data: Buffer.from(data) }));
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (frames, rawCuts) => {
        const buf = wire(frames);
        const cuts = rawCuts.map((c) => c % (buf.length + 1)).sort((a, b) => a - b);
        assert.deepEqual(decodeSplit(buf, cuts), frames);
      }),
    );
  });
});
