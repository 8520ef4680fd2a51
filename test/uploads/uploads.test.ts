import * as assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createServer, type TripleServer } from "../../src/index.js";
import type { Seen } from "./services.js";
import { RestFileService, UploadService } from "./services.js";
import { type Answer, BOUNDARY, MiB, sha256Of, type UploadSpec, upload1, upload2 } from "./upload-client.js";

const S = "/test.Uploads";

/** Polls until `dir` is empty (temp files are deleted once their descriptor closed). */
async function emptySoon(dir: string): Promise<void> {
  for (let i = 0; i < 100 && readdirSync(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(readdirSync(dir), [], `temp files left in ${dir}`);
}

const sends = [
  ["HTTP/1.1", upload1],
  ["HTTP/2", upload2],
] as const;

describe("streamed uploads (StreamedFile)", () => {
  let server: TripleServer;
  let url: string;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "triple-up-"));
    // A leftover of a "crashed" process (a pid that cannot exist) and a stranger's file.
    writeFileSync(join(dir, "triple-upload-999999999-0123456789abcdef01234567"), "x");
    writeFileSync(join(dir, "keep.txt"), "x");
    server = createServer({ services: [new UploadService()], uploads: { dir }, shutdownTimeoutMs: 200 });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("start-up deletes the temp files of dead processes, and only those", () => {
    assert.deepEqual(readdirSync(dir), ["keep.txt"]);
    rmSync(join(dir, "keep.txt"));
  });

  for (const [proto, send] of sends) {
    it(`${proto}: a large file is spilled to a 0600 temp file, bound before the handler, deleted after the call`, async () => {
      const size = 3 * MiB + 17;
      const a = await send(url, `${S}/stored`, {
        files: [{ name: "file", filename: "big.bin", size }],
        fields: [{ name: "note", value: "hi" }],
        filesFirst: true,
      });
      assert.equal(a.status, 200, a.body);
      const seen = JSON.parse(a.body) as Seen & { note: string };
      assert.equal(seen.size, size);
      assert.equal(seen.sha256, sha256Of(size));
      assert.equal(seen.note, "hi");
      assert.equal(seen.filename, "big.bin");
      assert.equal(seen.contentType, "application/octet-stream");
      assert.ok(seen.path?.startsWith(dir), seen.path);
      assert.equal(seen.mode, 0o600);
      assert.equal(seen.streaming, false);
      await emptySoon(dir);
      assert.equal(existsSync(seen.path as string), false);
    });

    it(`${proto}: a small file stays in memory`, async () => {
      const a = await send(url, `${S}/stored`, { files: [{ name: "file", filename: "s.bin", size: 1000 }], fields: [{ name: "note", value: "n" }] });
      assert.equal(a.status, 200, a.body);
      const seen = JSON.parse(a.body) as Seen;
      assert.equal(seen.path, undefined);
      assert.equal(seen.sha256, sha256Of(1000));
    });

    it(`${proto}: the last parameter streams to the handler while it arrives`, async () => {
      const size = 5 * MiB + 3;
      const a = await send(url, `${S}/live`, { fields: [{ name: "label", value: "L" }], files: [{ name: "file", filename: "l.bin", size }] });
      assert.equal(a.status, 200, a.body);
      const seen = JSON.parse(a.body) as Seen & { label: string };
      assert.equal(seen.streaming, true);
      assert.equal(seen.path, undefined);
      assert.equal(seen.size, size);
      assert.equal(seen.sha256, sha256Of(size));
      assert.equal(seen.label, "L");
      await emptySoon(dir);
    });
  }

  it("outside multipart (Triple JSON, Connect JSON) a StreamedFile binds from base64 bytes, in memory", async () => {
    const body = JSON.stringify({ file: Buffer.from("hello").toString("base64"), note: "x" });
    const variants: Record<string, string>[] = [
      { "content-type": "application/json" },
      { "content-type": "application/json", "connect-protocol-version": "1" },
    ];
    for (const headers of variants) {
      const r = await fetch(`${url}${S}/stored`, { method: "POST", headers, body });
      assert.equal(r.status, 200);
      const j = (await r.json()) as Seen & { value?: Seen };
      const seen = j.value ?? j;
      assert.equal(seen.size, 5);
      assert.equal(seen.path, undefined);
    }
  });

  it("several files under one name, some spilled, some in memory", async () => {
    const sizes = [10, 2 * MiB, 1 * MiB + 1];
    const a = await upload1(url, `${S}/many`, { files: sizes.map((size, i) => ({ name: "files", filename: `f${i}`, size })) });
    assert.equal(a.status, 200, a.body);
    const seen = JSON.parse(a.body) as Seen[];
    assert.deepEqual(
      seen.map((s) => [s.filename, s.size, s.sha256, s.path !== undefined]),
      sizes.map((size, i) => [`f${i}`, size, sha256Of(size), size > MiB]),
    );
    await emptySoon(dir);
  });

  it("small streamed files held in memory count against maxBodyBytes, with a message saying so", async () => {
    const a = await upload1(url, `${S}/many`, { files: Array.from({ length: 6 }, (_, i) => ({ name: "files", filename: `s${i}`, size: 900 * 1024 })) });
    assert.equal(a.status, 413, a.body);
    assert.match(a.body, /held in memory \(limits\.maxBodyBytes\)/);
    await emptySoon(dir);
  });

  it("StreamedFile fields of a class bound from multipart", async () => {
    const a = await upload2(url, `${S}/album`, {
      fields: [{ name: "title", value: "Holiday" }],
      files: [
        { name: "cover", filename: "c.jpg", contentType: "image/jpeg", size: 2 * MiB },
        { name: "photos", filename: "p1.jpg", size: 100 },
        { name: "photos", filename: "p2.jpg", size: 3 * MiB },
      ],
    });
    assert.equal(a.status, 200, a.body);
    const r = JSON.parse(a.body) as { title: string; cover: Seen; photos: Seen[] };
    assert.equal(r.title, "Holiday");
    assert.equal(r.cover.contentType, "image/jpeg");
    assert.equal(r.cover.sha256, sha256Of(2 * MiB));
    assert.deepEqual(
      r.photos.map((p) => p.size),
      [100, 3 * MiB],
    );
    await emptySoon(dir);
  });

  it("Uint8Array and InMemoryFile parameters keep their in-memory contract and limits", async () => {
    const ok = await upload1(url, `${S}/legacy`, {
      files: [
        { name: "a", size: 5 },
        { name: "b", filename: "b.txt", size: 7 },
      ],
    });
    assert.equal(ok.status, 200, ok.body);
    assert.deepEqual(JSON.parse(ok.body), { a: 5, b: 7, name: "b.txt" });
    const big = await upload1(url, `${S}/legacy`, {
      files: [
        { name: "a", size: 5 * MiB },
        { name: "b", size: 1 },
      ],
    });
    assert.equal(big.status, 413, big.body);
    assert.match(big.body, /limits\.maxFileBytes|request body larger than/);
  });

  it("a handler that returns without reading its streamed file is answered; the server keeps serving", async () => {
    for (const send of [upload1, upload2]) {
      const a = await send(url, `${S}/ignore`, { files: [{ name: "file", filename: "x.bin", size: 20 * MiB }] });
      assert.equal(a.status, 200, a.body);
      assert.deepEqual(JSON.parse(a.body), { name: "x.bin" });
    }
    const again = await upload1(url, `${S}/stored`, { files: [{ name: "file", size: 10 }], fields: [{ name: "note", value: "n" }] });
    assert.equal(again.status, 200);
  });

  for (const [proto, send] of sends) {
    it(`${proto}: a client that goes away mid-call, and a deadline, delete the spilled file`, async () => {
      UploadService.paths = [];
      const spec: UploadSpec = { files: [{ name: "file", size: 2 * MiB }], fields: [{ name: "n", value: "1" }] };
      // The call is in its handler (holding the file) when the client goes away.
      const ac = new AbortController();
      const cut = send(url, `${S}/hold`, spec, { signal: ac.signal }).catch((e: Error) => e);
      while (UploadService.paths.length === 0) await new Promise((r) => setTimeout(r, 10));
      assert.ok(existsSync(UploadService.paths[0]));
      ac.abort();
      assert.ok((await cut) instanceof Error);
      await emptySoon(dir);
      // A deadline while the handler holds its file.
      UploadService.paths = [];
      const deadline = await send(url, `${S}/hold`, spec, { headers: { "tri-service-timeout": "300" } });
      assert.equal(deadline.status, 408, deadline.body);
      assert.equal(UploadService.paths.length, 1);
      await emptySoon(dir);
      // The server shutting down while a call holds its file.
      UploadService.paths = [];
      const held = send(url, `${S}/hold`, spec).catch((e: Error) => e);
      while (UploadService.paths.length === 0) await new Promise((r) => setTimeout(r, 10));
      await server.close();
      await held;
      await emptySoon(dir);
      server = createServer({ services: [new UploadService()], uploads: { dir }, shutdownTimeoutMs: 200 });
      await server.listen({ port: 0 });
      url = server.url;
    });
  }
});

/** Limits and hostile bodies against a server with small limits. */
describe("upload limits and bad input", () => {
  let server: TripleServer;
  let url: string;
  let dir: string;
  const limits = {
    maxFiles: 3,
    maxFields: 3,
    maxParts: 8,
    maxPartHeaderBytes: 1024,
  };
  const uploads = {
    maxFileBytes: 4 * MiB,
    maxBytes: 6 * MiB,
    maxDiskBytes: 7 * MiB,
    // Every call here comes from 127.0.0.1: its share is the whole disk (the share has tests of its own).
    maxDiskBytesPerPeer: 7 * MiB,
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "triple-up-limits-"));
    server = createServer({ services: [new UploadService()], uploads: { dir, ...uploads }, limits });
    await server.listen({ port: 0 });
    url = server.url;
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Each case: the request, the status, and the words the error must contain. */
  const table: [string, string, UploadSpec, number, RegExp][] = [
    ["maxUploadFileBytes", "stored", { files: [{ name: "file", size: 64 * MiB }], fields: [{ name: "note", value: "n" }] }, 413, /uploads\.maxFileBytes/],
    ["maxUploadFileBytes (live)", "live", { fields: [{ name: "label", value: "l" }], files: [{ name: "file", size: 64 * MiB }] }, 413, /uploads\.maxFileBytes/],
    [
      "maxUploadBytes",
      "many",
      {
        files: [
          { name: "files", size: 3 * MiB },
          { name: "files", size: 3 * MiB },
          { name: "files", size: 3 * MiB },
        ],
      },
      413,
      /uploads\.maxBytes/,
    ],
    ["maxFiles", "many", { files: [1, 2, 3, 4].map(() => ({ name: "files", size: 10 })) }, 413, /limits\.maxFiles/],
    ["maxFields", "stored", { fields: [1, 2, 3, 4].map(() => ({ name: "note", value: "x" })), files: [{ name: "file", size: 1 }] }, 413, /limits\.maxFields/],
    [
      "maxParts",
      "stored",
      { fields: [1, 2].map(() => ({ name: "note", value: "x" })), files: Array.from({ length: 10 }, () => ({ name: "zz", filename: "a", size: 1 })) },
      413,
      /limits\.maxParts|limits\.maxFiles/,
    ],
  ];

  for (const [what, method, spec, status, words] of table) {
    for (const [proto, send] of sends) {
      it(`${proto}: ${what} → ${status}, refused while streaming, nothing left on disk, still serving`, async () => {
        const a = await send(url, `${S}/${method}`, spec);
        assert.equal(a.status, status, a.body);
        assert.match(a.body, words);
        // HTTP/1.1: the rest of an over-limit body is not read; the connection closes after the answer.
        if (proto === "HTTP/1.1" && status === 413) assert.equal(a.headers.connection, "close");
        const total = spec.files.reduce((n, f) => n + f.size, 0);
        if (total > 32 * MiB) assert.ok(a.sentAtAnswer < total / 2, `answered after ${a.sentAtAnswer} of ${total} bytes`);
        await emptySoon(dir);
        const ok = await send(url, `${S}/stored`, { files: [{ name: "file", size: 2 * MiB }], fields: [{ name: "note", value: "n" }] });
        assert.equal(ok.status, 200, ok.body);
      });
    }
  }

  it("maxUploadDiskBytes: a full upload disk → 507 naming the limit", async () => {
    UploadService.paths = [];
    // One call holds 4 MiB on disk; the next 4 MiB would cross the 7 MiB bound.
    const holding = upload1(
      url,
      `${S}/hold`,
      { files: [{ name: "file", size: 4 * MiB }], fields: [{ name: "n", value: "1" }] },
      { headers: { "tri-service-timeout": "2000" } },
    );
    while (UploadService.paths.length === 0) await new Promise((r) => setTimeout(r, 10));
    const a = await upload2(url, `${S}/stored`, { files: [{ name: "file", size: 4 * MiB }], fields: [{ name: "note", value: "n" }] });
    assert.equal(a.status, 507, a.body);
    assert.match(a.body, /uploads\.maxDiskBytes/);
    assert.equal((await holding).status, 408);
    await emptySoon(dir);
    const ok = await upload2(url, `${S}/stored`, { files: [{ name: "file", size: 3 * MiB }], fields: [{ name: "note", value: "n" }] });
    assert.equal(ok.status, 200, ok.body);
  });

  it("a part header bomb → 413 naming limits.maxPartHeaderBytes", async () => {
    const bomb = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\nX-Junk: ${"j".repeat(200_000)}\r\n\r\nabc\r\n--${BOUNDARY}--\r\n`;
    const a = await rawPost(url, `${S}/live`, bomb);
    assert.equal(a.status, 413, a.body);
    assert.match(a.body, /limits\.maxPartHeaderBytes/);
  });

  it("a never-ending part is cut at its limit", async () => {
    const a = await upload2(url, `${S}/stored`, { files: [{ name: "file", size: 10_000 * MiB }] });
    assert.equal(a.status, 413);
    assert.ok(a.sentAtAnswer < 64 * MiB, String(a.sentAtAnswer));
    await emptySoon(dir);
  });

  it("100,000 tiny parts are refused at the parts limit", async () => {
    const one = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n`;
    const tiny = `${one.repeat(100_000)}--${BOUNDARY}--\r\n`;
    const a = await rawPost(url, `${S}/stored`, tiny);
    assert.equal(a.status, 413, a.body);
    assert.match(a.body, /limits\.(maxParts|maxFields)/);
  });

  it("a filename with ../, NUL and 800 bytes of text is a name, never a path", async () => {
    // Within this server's maxPartHeaderBytes (1 KiB): 4 KB used to pass only because the limit was not enforced.
    const evil = `../../etc/${"\u0000"}passwd${"x".repeat(800)}`;
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${evil}"\r\nContent-Type: application/octet-stream\r\n\r\n${"z".repeat(2 * MiB)}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nn\r\n--${BOUNDARY}--\r\n`;
    const a = await rawPost(url, `${S}/stored`, body, 2048 * 1024 * 4);
    assert.equal(a.status, 200, a.body);
    const seen = JSON.parse(a.body) as Seen;
    assert.ok(!seen.filename.includes("/"), seen.filename);
    assert.ok(seen.path?.startsWith(`${dir}/triple-upload-`), seen.path);
    assert.match(seen.path as string, /\/triple-upload-\d+-[0-9a-f]{24}$/);
    await emptySoon(dir);
  });

  it("a wrong boundary → 400", async () => {
    const a = await upload1(
      url,
      `${S}/stored`,
      { files: [{ name: "file", size: 2 * MiB }], boundary: "other-boundary" },
      { headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } },
    );
    assert.equal(a.status, 400, a.body);
    await emptySoon(dir);
  });

  it("a truncated body → 400, nothing left on disk", async () => {
    for (const send of [upload1, upload2]) {
      const a = await send(url, `${S}/stored`, { files: [{ name: "file", size: 3 * MiB }], truncateAt: 2 * MiB });
      assert.equal(a.status, 400, a.body);
      assert.match(a.body, /malformed multipart body/);
      await emptySoon(dir);
    }
  });
});

/** One raw HTTP/1.1 POST of a multipart body. */
function rawPost(url: string, path: string, body: string, _hint = 0): Promise<Answer> {
  return upload1Raw(url, path, Buffer.from(body, "latin1"));
}

async function upload1Raw(url: string, path: string, body: Buffer): Promise<Answer> {
  const { request } = await import("node:http");
  const u = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: "POST",
        agent: false,
        headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}`, "content-length": body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers, sentAtAnswer: 0 }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

describe("a REST route with a StreamedFile body parameter", () => {
  it("takes a 6 MiB upload with a Content-Length past maxBodyBytes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "triple-up-rest-"));
    const server = createServer({ services: [new RestFileService()], uploads: { dir } });
    await server.listen({ port: 0 });
    try {
      const data = Buffer.alloc(6 * MiB, 7);
      const body = Buffer.concat([
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="r.bin"\r\n\r\n`),
        data,
        Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
      ]);
      const a = await upload1Raw(server.url, "/files/abc", body);
      assert.equal(a.status, 200, a.body);
      const seen = JSON.parse(a.body) as Seen & { id: string };
      assert.equal(seen.id, "abc");
      assert.equal(seen.size, data.length);
      assert.equal(seen.streaming, true);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("an upload directory that cannot be used", () => {
  it("a spilled upload fails with a clear 500; small files and other calls still work", async () => {
    const logged: string[] = [];
    const logger = { debug() {}, info() {}, warn: (_o: unknown, m: string) => logged.push(m), error: (_o: unknown, m: string) => logged.push(m) };
    const server = createServer({ services: [new UploadService()], uploads: { dir: "/dev/null/uploads" }, logger });
    await server.listen({ port: 0 });
    try {
      assert.ok(
        logged.some((m) => /cannot prepare the upload directory/.test(m)),
        logged.join("\n"),
      );
      const a = await upload1(server.url, `${S}/stored`, { files: [{ name: "file", size: 3 * MiB }], fields: [{ name: "note", value: "n" }] });
      assert.equal(a.status, 500, a.body);
      assert.match(a.body, /cannot spill an upload to disk/);
      const small = await upload2(server.url, `${S}/stored`, { files: [{ name: "file", size: 100 }], fields: [{ name: "note", value: "n" }] });
      assert.equal(small.status, 200, small.body);
    } finally {
      await server.close();
    }
  });
});
