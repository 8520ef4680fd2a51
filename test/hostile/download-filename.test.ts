import * as assert from "node:assert/strict";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { closeClient, createClient, Download } from "../../src/index.js";
import { DownloadService } from "../uploads/services.js";

/**
 * A server (or a man in the middle) names a download `../../.bashrc`: an app that saves
 * `download.filename` under its own directory would write outside it. RFC 6266 §4.3: recipients
 * strip path information. Before the fix the name came through as sent.
 */
describe("hostile: a Download's filename from the server is a base name only", () => {
  let disposition = "";
  const answer = (res: http.ServerResponse | http2.Http2ServerResponse) => {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-disposition": disposition, "content-length": "2" });
    res.end("ok");
  };
  const h1 = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  const h2 = http2.createServer((req, res) => {
    req.resume();
    req.on("end", () => answer(res));
  });
  const urls: Record<"1.1" | "2", string> = { "1.1": "", "2": "" };
  const clients: object[] = [];

  before(async () => {
    await new Promise<void>((r) => h1.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
    urls["1.1"] = `http://127.0.0.1:${(h1.address() as AddressInfo).port}`;
    urls["2"] = `http://127.0.0.1:${(h2.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const c of clients) await closeClient(c);
    h1.closeAllConnections();
    h1.close();
    h2.close();
  });

  const cases: [string, string | undefined][] = [
    ['attachment; filename="../../.bashrc"', ".bashrc"],
    ["attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd", "passwd"],
    ['attachment; filename="C:\\\\Windows\\\\evil.dll"', "evil.dll"],
    ['attachment; filename="a\\"b.txt"', 'a"b.txt'],
    ["attachment; filename*=UTF-8''r%C3%A9sum%C3%A9%0A.txt", "résumé.txt"],
    ['attachment; filename=".."', undefined],
    ["attachment; filename*=UTF-8''..%2F", undefined],
    ['attachment; filename="report.pdf"', "report.pdf"],
  ];
  for (const httpVersion of ["1.1", "2"] as const) {
    it(`HTTP/${httpVersion}: path parts, backslashes and control characters are stripped`, async () => {
      const down = createClient(DownloadService, { providers: [urls[httpVersion]], httpVersion, retries: 0, timeoutMs: 5000 });
      clients.push(down);
      for (const [cd, expected] of cases) {
        disposition = cd;
        const d = (await down.readable(2)) as unknown as Download;
        assert.ok(d instanceof Download, cd);
        assert.equal(d.filename, expected, cd);
        assert.equal(Buffer.concat((await d.stream().toArray()) as Buffer[]).toString(), "ok");
      }
    });
  }
});
