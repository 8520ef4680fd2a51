import * as assert from "node:assert/strict";
import * as zlib from "node:zlib";
import { after, before, describe, it } from "node:test";
import { brotliZeros, gzipZeros } from "../robustness/bomb.js";
import { ServerChild } from "../robustness/child.js";
import { assertNearBaseline, assertRefused, Bystander, sameSizeGreetMs, timedPost } from "./attack.js";

const BOUNDARY = "hostileBoundary7MA4YWxk";
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;
const TOO_LARGE = /after decompression|larger than/;
/** limits.maxBodyBytes by default: what a bomb may cost to inflate, the size of the greets it is timed against. */
const LIMIT = 4 * 1024 * 1024;

/**
 * Issue 22, break 6 (compressed half): a compressed multipart body was inflated whole: 1 MB of
 * gzip or 1.8 KiB of brotli inflated to 1 GiB (0.9–1.9 s of CPU each) because the preamble before
 * the first boundary was never counted. Now every content type is bounded after decompression
 * and the inflating stops at the first chunk past `maxBodyBytes`.
 */
describe("hostile: decompression bombs on every content type (issue 22, break 6)", () => {
  let server: ServerChild;
  let gzip3G: Buffer;
  let br1G: Buffer;

  before(async () => {
    server = await ServerChild.start();
    gzip3G = gzipZeros(3 * 1024);
    br1G = await brotliZeros(1024);
    assert.ok(gzip3G.length < 4 * 1024 * 1024, "the gzip bomb fits under the body limit");
  });
  after(() => server?.stop());

  it("gzip of 3 GiB of zeros as multipart (no boundary ever) → 413 within 10x a 4 MiB greet (before: inflated whole, then 400)", async () => {
    const bystander = new Bystander(server.url);
    const init = { headers: { "content-type": MULTIPART, "content-encoding": "gzip" }, body: gzip3G };
    const { reply, ms } = await timedPost(server.url, "/robust.User/Upload", init, 10_000);
    assertRefused(reply, 413, "resource_exhausted", TOO_LARGE);
    // The bomb costs about the 4 MiB the server takes: within 10x a greet of 4 MiB (inflated
    // whole, 3 GiB, it took far longer than that).
    assertNearBaseline(ms, await sameSizeGreetMs(server.url, LIMIT), 10, "a 3 GiB gzip bomb");
    await bystander.assertResponsive(2_000);
  });

  it("8 brotli bombs of 1 GiB as multipart at once → 413 each within 10x as many 4 MiB greets; greets beside answer", async () => {
    const bystander = new Bystander(server.url);
    const init = { headers: { "content-type": MULTIPART, "content-encoding": "br" }, body: br1G };
    const t = performance.now();
    const all = await Promise.all(Array.from({ length: 8 }, () => timedPost(server.url, "/robust.User/Upload", init, 10_000)));
    for (const { reply } of all) assertRefused(reply, 413, "resource_exhausted", TOO_LARGE);
    const ms = Math.round(performance.now() - t);
    assertNearBaseline(ms, await sameSizeGreetMs(server.url, LIMIT, 8), 10, "8 brotli bombs of 1 GiB");
    await bystander.assertResponsive(3_000);
  });

  it("a gzip bomb inside a well-formed multipart file part → 413 naming the part limit", async () => {
    const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="z.bin"\r\n\r\n`;
    const plain = Buffer.concat([Buffer.from(head), Buffer.alloc(64 * 1024 * 1024), Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
    const init = { headers: { "content-type": MULTIPART, "content-encoding": "gzip" }, body: zlib.gzipSync(plain, { level: 1 }) };
    const { reply } = await timedPost(server.url, "/robust.User/Upload", init, 10_000);
    assertRefused(reply, 413, "resource_exhausted", /limits\.maxFileBytes|larger than/);
  });

  it("gzip and brotli bombs on JSON, form, XML and text → 413 each, promptly (bounded CPU: the output stops at the limit)", async () => {
    const targets: Array<[string, string]> = [
      ["application/json", "/robust.User/Inspect"],
      ["application/x-www-form-urlencoded", "/robust.User/Form"],
      ["application/xml", "/robust.User/Register"],
      ["text/plain", "/robust.User/Shout"],
    ];
    const bystander = new Bystander(server.url);
    const baseline = await sameSizeGreetMs(server.url, LIMIT);
    for (const [type, path] of targets) {
      for (const [encoding, body] of [
        ["gzip", gzip3G],
        ["br", br1G],
      ] as const) {
        const { reply, ms } = await timedPost(server.url, path, { headers: { "content-type": type, "content-encoding": encoding }, body }, 10_000);
        assertRefused(reply, 413, "resource_exhausted", TOO_LARGE);
        assertNearBaseline(ms, baseline, 10, `${type} ${encoding}`);
      }
    }
    await bystander.assertResponsive(2_000);
    await server.assertHealthy();
  });
});
