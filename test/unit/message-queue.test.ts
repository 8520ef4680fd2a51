import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MessageQueue, type QueueBounds } from "../../src/message/message-queue.js";

/** A queue and the pressure signals it sent. */
function make(bounds: QueueBounds) {
  const pressure: boolean[] = [];
  let returns = 0;
  const q = new MessageQueue<string>(
    (p) => pressure.push(p),
    bounds,
    () => returns++,
  );
  return { q, pressure, returns: () => returns };
}

const rejectsWith = async (p: Promise<unknown>, err: unknown) =>
  assert.rejects(p, (e: unknown) => {
    assert.equal(e, err);
    return true;
  });

describe("MessageQueue", () => {
  it("pauses (onPressure(true)) when maxMessages is reached", () => {
    const { q, pressure } = make({ maxMessages: 4, maxBytes: 1000 });
    for (let i = 0; i < 3; i++) q.push(`m${i}`, 1);
    assert.deepEqual(pressure, []);
    q.push("m3", 1);
    assert.deepEqual(pressure, [true]);
    q.push("m4", 1);
    assert.deepEqual(pressure, [true], "pauses once");
    assert.equal(q.length, 5);
  });

  it("pauses when maxBytes is reached: a few large messages before the message bound", () => {
    const { q, pressure } = make({ maxMessages: 100, maxBytes: 1000 });
    q.push("a", 400);
    q.push("b", 400);
    assert.deepEqual(pressure, []);
    q.push("c", 200);
    assert.deepEqual(pressure, [true]);
    assert.equal(q.bufferedBytes, 1000);
    assert.equal(q.length, 3);
  });

  it("resumes (onPressure(false)) only once below half of both bounds", async () => {
    // Paused by the message bound; the bytes drop below half first, the messages later.
    const { q, pressure } = make({ maxMessages: 8, maxBytes: 1000 });
    for (const [i, size] of [300, 300, 10, 10, 10, 10, 10, 10].entries()) q.push(`m${i}`, size);
    assert.deepEqual(pressure, [true]);
    await q.next(); // 7 left, 360 bytes
    await q.next(); // 6 left, 60 bytes: bytes below half, messages not
    assert.deepEqual(pressure, [true], "6 of 8 messages still wait");
    await q.next(); // 5 left
    assert.deepEqual(pressure, [true], "5 of 8 messages still wait");
    await q.next(); // 4 left
    await q.next(); // 3 left: below half of both
    assert.deepEqual(pressure, [true, false]);
    q.push("again", 1);
    assert.deepEqual(pressure, [true, false], "no new pause below the bounds");
  });

  it("bytes hold the pause while messages are below half", async () => {
    const { q, pressure } = make({ maxMessages: 8, maxBytes: 1000 });
    q.push("small", 1);
    q.push("big", 999);
    assert.deepEqual(pressure, [true]);
    q.push("x", 1);
    await q.next(); // 2 messages left, 1000 bytes: still paused
    assert.deepEqual(pressure, [true]);
    await q.next(); // 1 message, 1 byte
    assert.deepEqual(pressure, [true, false]);
  });

  it("resumes at half the messages (or fewer), not before", async () => {
    const { q, pressure } = make({ maxMessages: 8, maxBytes: 1_000_000 });
    for (let i = 0; i < 8; i++) q.push(`m${i}`, 1);
    for (let i = 0; i < 3; i++) await q.next(); // 5 left: more than half
    assert.deepEqual(pressure, [true], "5 of 8 is more than half");
    await q.next(); // 4 left = half
    assert.deepEqual(pressure, [true, false]);
  });

  it("a message pushed to a waiting consumer goes straight to it (never counted)", async () => {
    const { q, pressure } = make({ maxMessages: 1, maxBytes: 1 });
    const p = q.next();
    q.push("direct", 100);
    assert.deepEqual(await p, { value: "direct", done: false });
    assert.equal(q.length, 0);
    assert.equal(q.bufferedBytes, 0);
    assert.deepEqual(pressure, []);
  });

  it("end() delivers the waiting messages, then done", async () => {
    const { q } = make({ maxMessages: 10, maxBytes: 1000 });
    q.push("a", 1);
    q.push("b", 1);
    q.end();
    assert.equal(q.settled, true);
    assert.deepEqual(await q.next(), { value: "a", done: false });
    assert.deepEqual(await q.next(), { value: "b", done: false });
    assert.deepEqual(await q.next(), { value: undefined, done: true });
    assert.deepEqual(await q.next(), { value: undefined, done: true });
  });

  it("end() settles a waiting consumer with done", async () => {
    const { q } = make({ maxMessages: 10, maxBytes: 1000 });
    const p = q.next();
    q.end();
    assert.deepEqual(await p, { value: undefined, done: true });
  });

  it("for await reads every message then stops at end()", async () => {
    const { q } = make({ maxMessages: 2, maxBytes: 1000 });
    const got: string[] = [];
    const reader = (async () => {
      for await (const m of q) got.push(m);
    })();
    for (let i = 0; i < 5; i++) q.push(`m${i}`, 1);
    q.end();
    await reader;
    assert.deepEqual(got, ["m0", "m1", "m2", "m3", "m4"]);
  });

  it("fail(err) delivers the waiting messages, then rejects with err", async () => {
    const { q } = make({ maxMessages: 10, maxBytes: 1000 });
    const err = new Error("broken");
    q.push("a", 1);
    q.fail(err);
    assert.deepEqual(await q.next(), { value: "a", done: false });
    await rejectsWith(q.next(), err);
    await rejectsWith(q.next(), err);
  });

  it("fail(err) rejects a waiting consumer", async () => {
    const { q } = make({ maxMessages: 10, maxBytes: 1000 });
    const err = new Error("broken");
    const p = q.next();
    q.fail(err);
    await rejectsWith(p, err);
  });

  it("abort(err) drops the waiting messages and rejects", async () => {
    const { q, pressure } = make({ maxMessages: 2, maxBytes: 1000 });
    const err = new Error("deadline");
    q.push("a", 1);
    q.push("b", 1);
    assert.deepEqual(pressure, [true]);
    q.abort(err);
    assert.equal(q.length, 0);
    assert.equal(q.bufferedBytes, 0);
    await rejectsWith(q.next(), err);
    // Nothing is held back any more: the producer is not left paused.
    assert.deepEqual(pressure, [true, false]);
  });

  it("abort(err) rejects a waiting consumer", async () => {
    const { q } = make({ maxMessages: 2, maxBytes: 1000 });
    const err = new Error("cancelled");
    const p = q.next();
    q.abort(err);
    await rejectsWith(p, err);
  });

  it("abort(err) after end() still drops the waiting messages", async () => {
    const { q } = make({ maxMessages: 10, maxBytes: 1000 });
    const err = new Error("deadline");
    q.push("a", 1);
    q.end();
    q.abort(err);
    await rejectsWith(q.next(), err);
  });

  it("return() drops the waiting messages and calls onReturn once", async () => {
    const { q, pressure, returns } = make({ maxMessages: 2, maxBytes: 1000 });
    q.push("a", 1);
    q.push("b", 1);
    assert.deepEqual(await q.return(), { value: undefined, done: true });
    assert.equal(returns(), 1);
    assert.equal(q.length, 0);
    assert.equal(q.settled, true);
    assert.deepEqual(await q.return(), { value: undefined, done: true });
    assert.equal(returns(), 1, "onReturn runs once");
    assert.deepEqual(await q.next(), { value: undefined, done: true });
    assert.deepEqual(pressure, [true, false]);
  });

  it("break in for await calls onReturn", async () => {
    const { q, returns } = make({ maxMessages: 10, maxBytes: 1000 });
    q.push("a", 1);
    q.push("b", 1);
    for await (const m of q) {
      assert.equal(m, "a");
      break;
    }
    assert.equal(returns(), 1);
    q.push("c", 1);
    assert.equal(q.length, 0);
  });

  it("return() after end or failure does not call onReturn", async () => {
    const ended = make({ maxMessages: 10, maxBytes: 1000 });
    ended.q.end();
    await ended.q.return();
    assert.equal(ended.returns(), 0);
    const failed = make({ maxMessages: 10, maxBytes: 1000 });
    failed.q.fail(new Error("x"));
    await failed.q.return();
    assert.equal(failed.returns(), 0);
  });

  it("push after settle is ignored (end, fail, abort, return)", async () => {
    const settle: Array<(q: MessageQueue<string>) => unknown> = [
      (q) => q.end(),
      (q) => q.fail(new Error("f")),
      (q) => q.abort(new Error("a")),
      (q) => q.return(),
    ];
    for (const s of settle) {
      const { q, pressure } = make({ maxMessages: 1, maxBytes: 1 });
      s(q);
      q.push("late", 100);
      assert.equal(q.length, 0);
      assert.equal(q.bufferedBytes, 0);
      assert.deepEqual(pressure, [], "a late push never pauses");
    }
  });

  it("settling twice: the first outcome stands", async () => {
    const { q } = make({ maxMessages: 10, maxBytes: 1000 });
    const err = new Error("first");
    q.fail(err);
    q.end();
    q.fail(new Error("second"));
    q.abort(new Error("third"));
    await rejectsWith(q.next(), err);
  });

  it("many messages through a small queue keep order and byte count (compaction)", async () => {
    const { q, pressure } = make({ maxMessages: 1000, maxBytes: 1_000_000 });
    for (let i = 0; i < 500; i++) q.push(String(i), 3);
    for (let i = 0; i < 300; i++) assert.equal((await q.next()).value, String(i));
    for (let i = 500; i < 700; i++) q.push(String(i), 3);
    assert.equal(q.length, 400);
    assert.equal(q.bufferedBytes, 1200);
    for (let i = 300; i < 700; i++) assert.equal((await q.next()).value, String(i));
    assert.equal(q.bufferedBytes, 0);
    assert.deepEqual(pressure, []);
  });
});
