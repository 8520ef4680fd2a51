import * as assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { closeClient, Code, createClient, type RpcError } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type GrpcJsServer, startGrpcJsServer } from "./grpc-js-server.js";

/** An h2c server answering every request with `headers` and no body (a trailers-only answer when they carry grpc-status). */
async function rawServer(headers: http2.OutgoingHttpHeaders): Promise<{ url: string; close(): void }> {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.resume();
    stream.on("end", () => stream.respond(headers, { endStream: true }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** Debian's python3 with python3-grpcio (scripts/install-test-deps.sh); the PATH's python3 may be another one. */
const PYTHON = "/usr/bin/python3";
const HAVE_GRPCIO = spawnSync(PYTHON, ["-c", "import grpc"]).status === 0;

/** A real grpcio (C-core) server of greet.GreetService/Greet (test/fixtures/grpcio/greet_server.py). */
async function grpcioServer(): Promise<{ url: string; close(): void }> {
  const script = join(process.cwd(), "test/fixtures/grpcio/greet_server.py");
  const child: ChildProcess = spawn(PYTHON, [script], { stdio: ["pipe", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once("data", (d: Buffer) => resolve(d.toString().trim()));
    child.once("exit", (c) => reject(new Error(`the grpcio server exited with ${c}`)));
  });
  return { url: `http://127.0.0.1:${port}`, close: () => child.kill() };
}

const HINT = /answers gRPC only, so call it with protocol: "grpc"/;

async function failure(url: string): Promise<RpcError> {
  const client = createClient(GreetServiceImpl, { providers: url, cluster: "failfast" });
  try {
    await client.greet({ name: "x" });
  } catch (e) {
    return e as RpcError;
  } finally {
    closeClient(client);
  }
  throw new Error("the call succeeded");
}

/** The default `triple` protocol against servers that answer gRPC only: the error says so and names the fix. */
describe("a Triple call to a gRPC-only server says to use protocol grpc", () => {
  let grpcJs: GrpcJsServer;
  before(async () => {
    grpcJs = await startGrpcJsServer();
  });
  after(() => grpcJs.close());

  it("grpc-js (415, no content type, no body)", async () => {
    const e = await failure(`http://${grpcJs.address}`);
    assert.equal(e.code, Code.Internal);
    assert.match(e.message, /^HTTP status 415/);
    assert.match(e.message, HINT);
  });

  it("grpcio (a real C-core server: trailers-only, Missing :te header), and with protocol grpc the same call works", {
    skip: !HAVE_GRPCIO && !process.env.CI && "python3-grpcio is not installed",
  }, async () => {
    const peer = await grpcioServer();
    try {
      const e = await failure(peer.url);
      assert.equal(e.code, Code.Unknown, e.message);
      assert.match(e.message, /Missing :te header/);
      assert.match(e.message, HINT);
      const client = createClient(GreetServiceImpl, { providers: peer.url, protocol: "grpc", cluster: "failfast" });
      try {
        assert.deepEqual({ ...(await client.greet({ name: "py" })) }, { greeting: "hello, py" });
      } finally {
        closeClient(client);
      }
    } finally {
      peer.close();
    }
  });

  it('grpcio\'s answer, simulated (C-core answers a request without "te: trailers" trailers-only: 200, application/grpc, grpc-status 2, "Missing :te header")', async () => {
    const peer = await rawServer({ ":status": 200, "content-type": "application/grpc", "grpc-status": "2", "grpc-message": "Missing :te header" });
    try {
      const e = await failure(peer.url);
      assert.equal(e.code, Code.Unknown);
      assert.equal(e.rawMessage, "Missing :te header");
      assert.match(e.message, /^Missing :te header/);
      assert.match(e.message, HINT);
    } finally {
      peer.close();
    }
  });

  it("grpc-go's answer, simulated (415, application/grpc, grpc-status 3)", async () => {
    const peer = await rawServer({
      ":status": 415,
      "content-type": "application/grpc",
      "grpc-status": "3",
      "grpc-message": 'invalid gRPC request content-type "application/json"',
    });
    try {
      const e = await failure(peer.url);
      assert.equal(e.code, Code.InvalidArgument);
      assert.match(e.message, HINT);
    } finally {
      peer.close();
    }
  });

  it("a Triple server's 415 with a body gets no hint", async () => {
    const peer = await rawServer({ ":status": 415, "content-type": "application/json" });
    try {
      assert.doesNotMatch((await failure(peer.url)).message, HINT);
    } finally {
      peer.close();
    }
  });
});

const STREAM_HINT =
  /could not read this stream's JSON messages \(application\/grpc\+json, how a client whose contentType is json streams\): a plain gRPC server reads protobuf only, so call it with protocol: "grpc" \(or contentType: "proto"\)/;

async function* names(...n: string[]) {
  for (const name of n) yield { name };
}

/** Streams with default options go as application/grpc+json: a plain gRPC server's refusal says so and names the fix. */
describe("streams of a default client against a gRPC-only server say to use protocol grpc", () => {
  let grpcJs: GrpcJsServer;
  before(async () => {
    grpcJs = await startGrpcJsServer();
  });
  after(() => grpcJs.close());

  it("grpc-js ('Error deserializing request'): server stream, client stream and bidi; with protocol grpc they work", async () => {
    const client = createClient(GreetServiceImpl, { providers: `http://${grpcJs.address}`, cluster: "failfast" });
    try {
      const server = await (async () => {
        for await (const _ of client.greetServerStream({ name: "x" })) {
          // nothing arrives
        }
      })().catch((e) => e as RpcError);
      const clientStream = await client.greetClientStream(names("a", "b")).catch((e) => e as RpcError);
      const bidi = await (async () => {
        for await (const _ of client.greetStream(names("a"))) {
          // nothing arrives
        }
      })().catch((e) => e as RpcError);
      for (const e of [server, clientStream, bidi]) {
        assert.ok(e instanceof Error, String(e));
        assert.match(e.message, /deserializ/i);
        assert.match(e.message, STREAM_HINT);
      }
    } finally {
      closeClient(client);
    }
    const grpcClient = createClient(GreetServiceImpl, { providers: `http://${grpcJs.address}`, protocol: "grpc", cluster: "failfast" });
    try {
      assert.equal((await grpcClient.greetClientStream(names("a", "b"))).greeting.length > 0, true);
    } finally {
      closeClient(grpcClient);
    }
  });

  it("grpcio's answer, simulated (grpc-status 2, 'Exception deserializing request!')", async () => {
    const peer = await rawServer({
      ":status": 200,
      "content-type": "application/grpc",
      "grpc-status": "2",
      "grpc-message": "Exception deserializing request!",
    });
    try {
      const client = createClient(GreetServiceImpl, { providers: peer.url, cluster: "failfast" });
      try {
        const e = (await client.greetClientStream(names("a")).catch((x) => x)) as RpcError;
        assert.equal(e.code, Code.Unknown);
        assert.equal(e.rawMessage, "Exception deserializing request!");
        assert.match(e.message, STREAM_HINT);
      } finally {
        closeClient(client);
      }
    } finally {
      peer.close();
    }
  });

  it("another stream error gets no hint", async () => {
    const peer = await rawServer({ ":status": 200, "content-type": "application/grpc", "grpc-status": "5", "grpc-message": "no such thing" });
    try {
      const client = createClient(GreetServiceImpl, { providers: peer.url, cluster: "failfast" });
      try {
        const e = (await client.greetClientStream(names("a")).catch((x) => x)) as RpcError;
        assert.equal(e.code, Code.NotFound);
        assert.doesNotMatch(e.message, STREAM_HINT);
      } finally {
        closeClient(client);
      }
    } finally {
      peer.close();
    }
  });
});
