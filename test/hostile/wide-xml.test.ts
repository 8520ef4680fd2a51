import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ServerChild } from "../robustness/child.js";
import { assertNearBaseline, assertRefused, Bystander, sameSizeGreetMs, timedPost } from "./attack.js";

const XML = { "content-type": "application/xml" };

function attrs(n: number, from = 0): string {
  let s = "";
  for (let i = from; i < from + n; i++) s += ` a${i}="v"`;
  return s;
}

/**
 * Issue 22, break 7: one 2.3 MB document with 200k attributes blocked the event loop 1.6 s and
 * added 318 MB of RSS; four senders cut a good client's success rate to 66 %. A linear pre-scan
 * now counts elements, attributes (per element and in total) and depth before fast-xml-parser
 * builds anything, and refuses a document over a limit with 413 (400 for depth) naming it. A
 * narrow document is bounded too: past `limits.maxXmlBytes` (1 MiB) it is refused before parsing.
 */
describe("hostile: wide XML (issue 22, break 7)", () => {
  let server: ServerChild;
  before(async () => {
    server = await ServerChild.start();
  });
  after(() => server?.stop());

  it("4 senders of 2.3 MB with 200k attributes on one element → 413 naming maxXmlElementAttributes, each within 5x as many greets of the same size; greets beside answer", async () => {
    const body = `<user${attrs(200_000)}><username>u</username><location>l</location></user>`;
    assert.ok(body.length > 2_200_000);
    const bystander = new Bystander(server.url);
    const all = await Promise.all(Array.from({ length: 4 }, () => timedPost(server.url, "/robust.User/Register", { headers: XML, body }, 10_000)));
    const baseline = await sameSizeGreetMs(server.url, body.length, 4);
    for (const { reply, ms } of all) {
      assertRefused(reply, 413, "resource_exhausted", /more than 256 attributes \(limits\.maxXmlElementAttributes\)/);
      // Each refused after a scan: within 5x four greets of the same size at once (a parse held
      // the event loop 1.6 s per document, so the last of four answered after 6 s: over 15x).
      assertNearBaseline(ms, baseline, 5, "4 wide documents");
    }
    await bystander.assertResponsive(3_000);
    const rep = await server.assertHealthy();
    assert.ok(rep.rss < 200 * 1024 * 1024, `RSS ${Math.round(rep.rss / 1048576)} MiB after the wide documents`);
  });

  it("200k attributes spread 100 per element → 413 naming maxXmlAttributes", async () => {
    let body = "<user>";
    for (let e = 0; e < 2000; e++) body += `<x${attrs(100, e * 100)}/>`;
    body += "<username>u</username><location>l</location></user>";
    const { reply, ms } = await timedPost(server.url, "/robust.User/Register", { headers: XML, body }, 10_000);
    assertRefused(reply, 413, "resource_exhausted", /more than 10000 attributes \(limits\.maxXmlAttributes\)/);
    assertNearBaseline(ms, await sameSizeGreetMs(server.url, body.length), 5, "200k attributes spread");
  });

  it("500k empty elements (2 MB) → 413 naming maxXmlElements", async () => {
    const body = `<user>${"<x/>".repeat(500_000)}<username>u</username><location>l</location></user>`;
    const { reply, ms } = await timedPost(server.url, "/robust.User/Register", { headers: XML, body }, 10_000);
    assertRefused(reply, 413, "resource_exhausted", /more than 20000 elements \(limits\.maxXmlElements\)/);
    assertNearBaseline(ms, await sameSizeGreetMs(server.url, body.length), 5, "500k elements");
  });

  it("4 senders of a narrow 4 MB document (one long text node, within every shape limit) → 413 naming maxXmlBytes, each within 5x as many greets of the same size; greets beside answer", async () => {
    // Before maxXmlBytes: fast-xml-parser took ~1.2 s and ~170 MB per document (noisy), so four
    // of them held the event loop ~5 s, which the bystander's 1.5 s bound catches.
    const body = `<user><username>u</username><location>${"lorem ipsum ".repeat(340_000)}</location></user>`;
    assert.ok(body.length > 4_000_000 && body.length < 4 * 1024 * 1024, "under the body limit");
    const bystander = new Bystander(server.url);
    const all = await Promise.all(Array.from({ length: 4 }, () => timedPost(server.url, "/robust.User/Register", { headers: XML, body }, 10_000)));
    const baseline = await sameSizeGreetMs(server.url, body.length, 4);
    for (const { reply, ms } of all) {
      assertRefused(reply, 413, "resource_exhausted", /XML document is larger than 1048576 bytes \(limits\.maxXmlBytes\)/);
      assertNearBaseline(ms, baseline, 5, "4 narrow documents");
    }
    await bystander.assertResponsive(3_000);
    await server.assertHealthy();
  });

  it("65 levels deep → 400 naming maxXmlDepth; an ordinary document still binds", async () => {
    const deep = `<user>${"<a>".repeat(64)}${"</a>".repeat(64)}</user>`;
    const { reply } = await timedPost(server.url, "/robust.User/Register", { headers: XML, body: deep }, 10_000);
    assertRefused(reply, 400, "invalid_argument", /deeper than 64 elements \(limits\.maxXmlDepth\)/);
    const ok = await timedPost(
      server.url,
      "/robust.User/Register",
      {
        headers: { ...XML, accept: "application/json" },
        body: '<user id="1"><!-- <a b="c"> --><username>ann</username><location><![CDATA[Oslo]]></location></user>',
      },
      10_000,
    );
    assert.equal(ok.reply.status, 200, ok.reply.text());
    assert.equal(ok.reply.json().message, "ann@Oslo");
  });
});
