import * as assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { Code, createServer, type TripleServer } from "../../src/index.js";
import { WebTestService } from "./service.js";

/** Bun comes with the devDependencies (the `bun` package); its binary is node_modules/.bin/bun. */
const BUN = resolve("node_modules/.bin/bun");

/** The web client under Bun (its own fetch, its TypeScript loader, the sources as they are) against our server on Node. */
describe("the web client under Bun", { skip: !existsSync(BUN) && !process.env.CI ? "bun is not installed (npm ci installs it)" : false }, () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new WebTestService()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server?.close());

  it("Triple, Connect and gRPC-Web: unary, revival, a server stream, an error, a deadline", async () => {
    const { stdout } = await promisify(execFile)(BUN, [resolve("test/web/bun-client.ts"), server.url], { timeout: 60_000 });
    const r = JSON.parse(stdout);
    assert.equal(r.runtime, "bun");
    for (const p of ["triple", "connect", "grpc-web"]) {
      assert.deepEqual(
        r[p],
        {
          greet: "hello, bun",
          profile: true,
          stream: ["10000000000n", "20000000000n"],
          error: [Code.InvalidArgument, "name is not right: nobody"],
          deadline: true,
        },
        p,
      );
    }
  });
});
