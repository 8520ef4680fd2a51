import * as assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import type * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { GREET_CACHE_CONTROL, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { Code, createServer, type TripleServer } from "../../src/index.js";
import { recordingProxy, type Seen } from "./raw.js";

/** The fixture package: dubbo-js on @bufbuild/protobuf 1.x, with its own package.json and lock. */
const FIXTURE = path.resolve(__dirname, "../../../test/fixtures/dubbo-js");

/** Installs the fixture's locked dependencies when CI (`.ci/run`) has not already. */
function ensureInstalled(): void {
  if (existsSync(path.join(FIXTURE, "node_modules/@apachedubbo/dubbo-node"))) return;
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["ci", "--no-audit", "--no-fund", "--prefix", FIXTURE], { stdio: "inherit", timeout: 180_000 });
  assert.equal(r.status, 0, "npm ci of test/fixtures/dubbo-js failed");
}

type Result = { value?: unknown; error?: { code: number; message: string; details: unknown[] }; thrown?: string; cacheControl?: string | null };

/**
 * dubbo-js (`@apachedubbo/dubbo` + `@apachedubbo/dubbo-node` 3.0.0-alpha, a real Triple client
 * from the Dubbo project) against the greet sample, over HTTP/1.1 and HTTP/2, binary and JSON:
 * unary, errors, a deadline, streams of every kind HTTP/2 carries, and GET for the idempotent
 * method. The client runs in a child process from its own fixture package (it needs
 * @bufbuild/protobuf 1.x, the repository has 2.x) and prints its results as JSON.
 */
describe("dubbo-js Triple transport against the greet sample", () => {
  let server: TripleServer;
  let proxy: http.Server;
  const seen: Seen[] = [];
  let out: Record<string, Record<string, Result>>;

  before(async () => {
    ensureInstalled();
    server = createServer({ services: [new GreetServiceImpl()] });
    await server.listen({ port: 0 });
    proxy = await recordingProxy(server.url, seen);
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(FIXTURE, "client.js"), server.url, proxyUrl], { timeout: 60_000 });
    out = JSON.parse(stdout);
  });
  after(async () => {
    await new Promise((r) => proxy?.close(r));
    await server?.close();
  });

  for (const way of ["HTTP/1.1 proto", "HTTP/1.1 json", "HTTP/2 proto", "HTTP/2 json"]) {
    describe(way, () => {
      it("unary Greet: the greeting", () => {
        assert.deepEqual(out[way].greet, { value: "triple" });
      });

      it("unary errors keep their code", () => {
        // dubbo-js reads an error body only when its `status` is a gRPC code (0–16); the Triple
        // HTTP unary body's `status` is Dubbo's legacy number (70, 40 …) by design, so dubbo-js
        // takes the code from the HTTP status and says `HTTP <status>` instead of the text.
        assert.deepEqual(out[way].wrongName, { error: { code: Code.Unknown, message: "HTTP 500", details: [] } });
        assert.deepEqual(out[way].withDetails, { error: { code: Code.InvalidArgument, message: "HTTP 400", details: [] } });
      });

      it("a deadline (timeoutMs → tri-service-timeout) is deadline_exceeded", () => {
        assert.equal(out[way].deadline.error?.code, Code.DeadlineExceeded, JSON.stringify(out[way].deadline));
      });

      it("server streaming: the three greetings", () => {
        assert.deepEqual(out[way].serverStream, { value: ["hello, ada (1/3)", "hello, ada (2/3)", "hello, ada (3/3)"] });
      });

      if (way.startsWith("HTTP/2")) {
        it("client and bidi streaming over HTTP/2", () => {
          assert.deepEqual(out[way].clientStream, { value: "a, b, c" });
          assert.deepEqual(out[way].bidi, { value: ["p", "q"] });
        });
      }
    });
  }

  it("GET (useHttpGet) on the idempotent GreetCached: ?triple=v1.0.0, JSON and proto, with Cache-Control", () => {
    for (const f of ["json", "proto"]) {
      assert.deepEqual(out[`GET ${f}`], { value: "hello, ann", cacheControl: GREET_CACHE_CONTROL });
    }
    const gets = seen.map((s) => `${s.method} ${s.url}`).filter((s) => s.startsWith("GET /greet.GreetService/GreetCached?"));
    assert.equal(gets.length, 2, gets.join("\n"));
    for (const g of gets) assert.match(g, /[?&]triple=v1\.0\.0(&|$)/);
    assert.ok(gets.some((g) => /encoding=json/.test(g)) && gets.some((g) => /encoding=proto/.test(g) && /base64=1/.test(g)), gets.join("\n"));
  });
});
