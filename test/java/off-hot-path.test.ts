import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";

/**
 * The Java serializations stay off the hot path: a fresh process serving .proto and plain
 * IDL-less gRPC calls (and a client without `serialization`) never loads them; the first
 * hessian2 wrapper does.
 */
const SCRIPT = `
const http2 = require("node:http2");
const { createServer, createClient, closeClient } = require(${JSON.stringify(join(__dirname, "../../src/index.js"))});
const { GreetServiceImpl } = require(${JSON.stringify(join(__dirname, "../../samples/greet/greet-service.js"))});
const { UserService } = require(${JSON.stringify(join(__dirname, "user-service.js"))});
const loaded = () => Object.keys(require.cache).filter((k) => /serialization[\\\\/](hessian2|jsonb)|java-(serialization|wrapper-codec)/.test(k)).length;
(async () => {
  const server = createServer({ services: [new GreetServiceImpl(), new UserService()] });
  await server.listen({ port: 0 });
  const greet = createClient(GreetServiceImpl, { providers: [server.url], protocol: "grpc" });
  await greet.greet({ name: "triple" });
  const users = createClient(UserService, { providers: [server.url], protocol: "grpc" });
  await users.echo("plain derived protobuf");
  const before = loaded();
  const java = createClient(UserService, { providers: [server.url], serialization: "hessian2" });
  await java.echo("hessian2");
  const after = loaded();
  for (const c of [greet, users, java]) closeClient(c);
  await server.close();
  process.stdout.write(JSON.stringify({ before, after }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

describe("Java serializations off the hot path", () => {
  it("are not loaded by .proto or plain gRPC calls, only by the first Java wrapper", () => {
    const out = execFileSync(process.execPath, ["-e", SCRIPT], { cwd: __dirname }).toString();
    const { before, after } = JSON.parse(out);
    assert.equal(before, 0, "nothing of hessian2/JSONB loaded before a Java wrapper");
    assert.ok(after > 0, "loaded once a hessian2 client is used");
  });
});
