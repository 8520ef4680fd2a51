import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as net from "node:net";
import * as path from "node:path";
import { after, describe, it } from "node:test";
import { unary } from "./grpc-js-calls.js";
import { connectClients } from "./grpc-js-clients.js";

/** The compiled interop server script, in the same output tree as this compiled test. */
const SCRIPT = path.resolve(__dirname, "../../samples/interop/server.js");

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

describe("npm run interop:server -- --port N", () => {
  let child: ChildProcess | undefined;
  after(() => {
    child?.kill("SIGTERM");
  });

  it("serves grpc.testing.TestService on 127.0.0.1:N and says where", async () => {
    const port = await freePort();
    child = spawn(process.execPath, [SCRIPT, "--port", String(port)], { stdio: ["ignore", "pipe", "inherit"] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child!.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) resolve(out);
      });
      child!.once("exit", (code) => reject(new Error(`server exited with ${code}: ${out}`)));
    });
    assert.match(line, new RegExp(`127\\.0\\.0\\.1:${port}`));
    const clients = connectClients(`127.0.0.1:${port}`);
    try {
      const { responses } = await unary(clients.test, "unaryCall", { response_size: 7 });
      assert.equal(responses[0].payload.body.length, 7);
    } finally {
      clients.close();
    }
    const exited = new Promise((r) => child!.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    child = undefined;
  });

  it("refuses a --port that is not a port number", async () => {
    const p = spawn(process.execPath, [SCRIPT, "--port", "nope"], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    p.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    const code = await new Promise((r) => p.once("exit", r));
    assert.notEqual(code, 0);
    assert.match(err, /--port needs a port number/);
  });
});
