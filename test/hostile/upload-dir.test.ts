import * as assert from "node:assert/strict";
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createHandler, createServer } from "../../src/index.js";
import type { Seen } from "../uploads/services.js";
import { UploadService } from "../uploads/services.js";
import { MiB, upload1 } from "../uploads/upload-client.js";
import { Bystander } from "./attack.js";

// Issue 33, degraded: a pre-existing world-writable uploadDir owned by another user was used as
// it was (its owner could rename or replace temp files while a handler read `file.path`), and
// the default directory was a predictable name in the shared temp directory
// (`<tmpdir>/triple-rpc-uploads-<uid>`): another user could create it first, world-writable.
// Now a directory owned by someone else or writable by others is refused (a TypeError naming
// uploadDir, at createServer or listen), and the default is a private mkdtemp directory of the
// server's own, removed when it closes.

const uid = process.getuid?.() ?? -1;
/** Another user's uid (nobody): the tests that need root to give a directory away skip otherwise. */
const OTHER_UID = 65534;

describe("hostile: the upload directory (uploads.dir)", { skip: uid === -1 ? "no uids on this platform" : false }, () => {
  let base: string;
  before(() => {
    base = mkdtempSync(join(tmpdir(), "triple-updir-"));
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it("a world-writable uploads.dir is refused at createServer, naming the option, the directory and the fix", () => {
    const dir = join(base, "open");
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    assert.throws(
      () => createServer({ services: [new UploadService()], uploads: { dir } }),
      (e: Error) =>
        e instanceof TypeError &&
        e.message.includes(`uploads.dir ${dir} is writable by other users (mode 0777)`) &&
        /chmod 700/.test(e.message) &&
        /leave uploads\.dir out/.test(e.message),
    );
    // Group-writable is refused too; 0700 (and 0755) is fine.
    chmodSync(dir, 0o770);
    assert.throws(() => createServer({ services: [new UploadService()], uploads: { dir } }), /writable by other users \(mode 0770\)/);
    chmodSync(dir, 0o755);
    assert.doesNotThrow(() => createServer({ services: [new UploadService()], uploads: { dir } }));
  });

  it("an uploads.dir owned by another user is refused, also when it appears between createServer and listen", {
    skip: uid !== 0 ? "needs root to give a directory away" : false,
  }, async () => {
    const theirs = join(base, "theirs");
    mkdirSync(theirs, { mode: 0o700 });
    chownSync(theirs, OTHER_UID, OTHER_UID);
    assert.throws(
      () => createServer({ services: [new UploadService()], uploads: { dir: theirs } }),
      new RegExp(`uploads\\.dir ${theirs} is owned by uid ${OTHER_UID}, not by this process`),
    );
    // A symbolic link another user owns is not followed either (even to a directory of ours).
    const target = join(base, "mine");
    mkdirSync(target, { mode: 0o700 });
    const link = join(base, "link");
    symlinkSync(target, link);
    lchownSync(link, OTHER_UID, OTHER_UID);
    assert.throws(() => createServer({ services: [new UploadService()], uploads: { dir: link } }), /is a symbolic link owned by uid 65534/);
    lchownSync(link, uid, uid);
    assert.doesNotThrow(() => createServer({ services: [new UploadService()], uploads: { dir: link } }));
    const late = join(base, "late");
    const server = createServer({ services: [new UploadService()], uploads: { dir: late } });
    mkdirSync(late, { mode: 0o700 });
    chownSync(late, OTHER_UID, OTHER_UID);
    await assert.rejects(server.listen({ port: 0 }), /uploads\.dir .*late is owned by uid 65534/);
    await server.close();
    // A mounted handler prepares its directory at once: refused there.
    assert.throws(() => createHandler({ services: [new UploadService()], uploads: { dir: theirs } }), /is owned by uid 65534/);
  });

  it("the default directory is private (mkdtemp, 0700, this server's own), not the predictable name another user could create first, and goes when the server closes", async () => {
    const shared = join(base, "shared-tmp");
    mkdirSync(shared, { mode: 0o1777 });
    chmodSync(shared, 0o1777);
    // What another user could have prepared at the old predictable name.
    const predictable = join(shared, `triple-rpc-uploads-${uid}`);
    mkdirSync(predictable);
    chmodSync(predictable, 0o777);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = shared;
    try {
      UploadService.paths = [];
      const server = createServer({ services: [new GreetServiceImpl(), new UploadService()] });
      await server.listen({ port: 0 });
      const bystander = new Bystander(server.url, 3_000);
      const a = await upload1(server.url, "/test.Uploads/stored", {
        files: [{ name: "file", size: 2 * MiB }],
        fields: [{ name: "note", value: "n" }],
        filesFirst: true,
      });
      assert.equal(a.status, 200, a.body);
      const seen = JSON.parse(a.body) as Seen;
      assert.ok(seen.path, "the file was not spilled");
      const dir = dirname(seen.path);
      assert.notEqual(dir, predictable, "the upload went to the predictable directory");
      assert.equal(dirname(dir), shared);
      assert.match(dir, new RegExp(`/triple-rpc-uploads-${process.pid}-[A-Za-z0-9]{6}$`));
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.equal(statSync(dir).uid, uid);
      assert.deepEqual(readdirSync(predictable), []);
      // A second server in the same process gets a directory of its own.
      const other = createServer({ services: [new UploadService()] });
      await other.listen({ port: 0 });
      const b = await upload1(other.url, "/test.Uploads/stored", {
        files: [{ name: "file", size: 2 * MiB }],
        fields: [{ name: "note", value: "n" }],
        filesFirst: true,
      });
      assert.notEqual(dirname((JSON.parse(b.body) as Seen).path as string), dir);
      await other.close();
      await bystander.assertResponsive(2_000);
      await server.close();
      assert.equal(existsSync(dir), false, "the default directory outlived its server");
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it("start-up removes the default directories of processes that no longer run, and only those", async () => {
    const shared = join(base, "sweep-tmp");
    mkdirSync(shared, { mode: 0o700 });
    const dead = join(shared, "triple-rpc-uploads-999999999-abcDEF");
    mkdirSync(dead, { mode: 0o700 });
    const alive = join(shared, `triple-rpc-uploads-${process.ppid}-abcDEF`);
    mkdirSync(alive, { mode: 0o700 });
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = shared;
    try {
      // The sweep runs once per process: in a fresh child.
      const { execFileSync } = await import("node:child_process");
      const script = `require(${JSON.stringify(join(__dirname, "../../src/index.js"))}).createServer({}).listen({ port: 0 }).then(() => process.exit(0))`;
      execFileSync(process.execPath, ["-e", script], { env: { ...process.env, TMPDIR: shared }, timeout: 10_000 });
      assert.equal(existsSync(dead), false, "a dead process's directory is still there");
      assert.equal(existsSync(alive), true, "a live process's directory was removed");
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});
