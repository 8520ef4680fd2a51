import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ServerChild } from "../robustness/child.js";
import { assertNearBaseline, assertRefused, Bystander, sameSizeGreetMs, timedPost } from "./attack.js";

const FORM = { "content-type": "application/x-www-form-urlencoded" };

/**
 * Issue 22, break 1: `a&a&a…` made `parseForm` search for `=` to the end of the body once per
 * field, fields × body: 1M fields blocked the event loop 10.9 s, 2M fields (4 MB, under the body
 * limit) 104 s, before auth, while every other call timed out. The parser is linear now and a
 * form has at most `limits.maxFormFields` (1000) fields.
 */
describe("hostile: form field flood (issue 22, break 1)", () => {
  describe("default limits", () => {
    let server: ServerChild;
    before(async () => {
      server = await ServerChild.start();
    });
    after(() => server?.stop());

    it("2M empty fields (4 MB) → 413 naming maxFormFields within 10x a greet of its size; greets beside keep answering", async () => {
      const body = Buffer.from("a&".repeat(2_000_000));
      assert.ok(body.length < 4 * 1024 * 1024, "the flood fits under the default body limit");
      const bystander = new Bystander(server.url);
      // Before the fix this took ~100 s (the timeout below fails the test after 10 s).
      const { reply, ms } = await timedPost(server.url, "/robust.User/Form", { headers: FORM, body }, 10_000);
      assertRefused(reply, 413, "resource_exhausted", /more than 1000 fields \(limits\.maxFormFields\)/);
      // Before the fix ~100 s; now within 10x a well-formed greet of the same size.
      assertNearBaseline(ms, await sameSizeGreetMs(server.url, body.length), 10, "2M empty fields");
      await bystander.assertResponsive(3_000);
      await server.assertHealthy();
    });

    it("1000 fields are accepted", async () => {
      const body = Array.from({ length: 1000 }, (_, i) => `f${i}=${i}`).join("&");
      const { reply } = await timedPost(server.url, "/robust.User/Form", { headers: FORM, body }, 10_000);
      assert.equal(reply.status, 200, reply.text());
      assert.equal(reply.json().keys.length, 32, "the shape lists its first 32 keys");
    });
  });

  describe("the parser is linear even with the field limit lifted", () => {
    let server: ServerChild;
    before(async () => {
      server = await ServerChild.start({ limits: { maxFormFields: 10_000_000 } });
    });
    after(() => server?.stop());

    it("1M empty fields (2 MB) are parsed in about the time of 1M `a=` fields (10.9 s before, unloaded); greets beside answer", async () => {
      const body = Buffer.from("a&".repeat(1_000_000));
      const bystander = new Bystander(server.url);
      const { reply, ms } = await timedPost(server.url, "/robust.User/Form", { headers: FORM, body }, 10_000);
      assert.equal(reply.status, 200, reply.text());
      assert.deepEqual(reply.json().keys, ["a"]);
      // Timed against 1M fields with `=` (3 MB, one key too), which the old parser read in
      // linear time: 10.9 s before for the bare fields, against about a second for these.
      const named = await timedPost(server.url, "/robust.User/Form", { headers: FORM, body: Buffer.from("a=&".repeat(1_000_000)) }, 10_000);
      assert.deepEqual(named.reply.json().keys, ["a"]);
      assertNearBaseline(ms, named.ms, 3, "1M bare fields against 1M named");
      await bystander.assertResponsive(6_000);
    });
  });
});
