// tier: slow (the dubbo-js fixture package)
import * as assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { Code as ConnectCode, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import { GREET_PROTO, type GreetRequest, type GreetResponse, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { closeClient, Code, createClient, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { greetDescriptors } from "../connect/greet-descriptors.js";
import { collect } from "./services.js";

/** Our server's greet service whose GreetStream ends the call on the name "abort". */
class EarlyEndGreet extends GreetServiceImpl {
  override async *greetStream(reqs: AsyncIterable<GreetRequest>): AsyncGenerator<GreetResponse> {
    for await (const r of reqs) {
      if (r.name === "abort") throw new RpcError(Code.Aborted, "early end");
      yield { greeting: r.name };
    }
  }
}

async function grpcJsServer(): Promise<{ address: string; close(): void }> {
  const def = loader.loadSync(GREET_PROTO, { keepCase: true });
  const service = (grpc.loadPackageDefinition(def) as any).greet.GreetService.service as grpc.ServiceDefinition;
  const server = new grpc.Server();
  server.addService(service, {
    GreetStream(call: grpc.ServerDuplexStream<any, any>) {
      call.on("data", (r: { name: string }) => {
        if (r.name === "abort") call.emit("error", { code: grpc.status.ABORTED, details: "early end" });
        else call.write({ greeting: r.name });
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
}

async function connectNodeServer(): Promise<{ address: string; close(): void }> {
  const { service } = greetDescriptors();
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(service, {
        async *greetStream(reqs: AsyncIterable<{ name: string }>) {
          for await (const r of reqs) {
            if (r.name === "abort") throw new ConnectError("early end", ConnectCode.Aborted);
            yield { greeting: r.name };
          }
        },
      } as any);
    },
  });
  const server = http2.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

/** dubbo-js's server runs from its fixture package (it needs @bufbuild/protobuf 1.x). */
async function dubboJsServer(): Promise<{ address: string; close(): void }> {
  const fixture = path.resolve(__dirname, "../../../test/fixtures/dubbo-js");
  if (!existsSync(path.join(fixture, "node_modules/@apachedubbo/dubbo-node"))) {
    // As test/connect/dubbo-js.test.ts does when CI (.ci/run) has not installed it.
    const r = spawnSync(process.platform === "win32" ? "npm.cmd" : "npm", ["ci", "--no-audit", "--no-fund", "--prefix", fixture], {
      stdio: "inherit",
      timeout: 180_000,
    });
    assert.equal(r.status, 0, "npm ci of test/fixtures/dubbo-js failed");
  }
  const child: ChildProcess = spawn(process.execPath, [path.join(fixture, "server.js")], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once("data", (d: Buffer) => resolve(d.toString().trim()));
    child.once("exit", (c) => reject(new Error(`dubbo-js server exited with ${c}`)));
  });
  return { address: `127.0.0.1:${port}`, close: () => child.kill() };
}

async function ourServer(): Promise<{ address: string; close(): void }> {
  const server: TripleServer = createServer({ services: [new EarlyEndGreet()] });
  await server.listen({ port: 0, host: "127.0.0.1" });
  return { address: server.url, close: () => void server.close() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A bidi call the server ends (ABORTED) after the first request while the client's request
 * stream is still open and would go on: the call must end at the server's trailers, and the
 * request stream must be closed (its generator's `finally` runs) — not when the client's side
 * would have ended, which here is never.
 */
async function checkEarlyEnd(address: string, protocol: "grpc" | "triple" | "connect" | "grpc-web"): Promise<void> {
  const client = createClient(GreetServiceImpl, { providers: [address], protocol });
  let requestsClosed = false;
  async function* requests(): AsyncGenerator<GreetRequest> {
    try {
      yield { name: "abort" };
      for (;;) {
        await sleep(20);
        yield { name: "more" };
      }
    } finally {
      requestsClosed = true;
    }
  }
  const guard = new AbortController();
  const timer = setTimeout(() => guard.abort(new Error("the call did not end at the server's trailers")), 3000);
  try {
    const err = await collect(client.greetStream(requests(), { signal: guard.signal })).then(
      () => new Error("the call succeeded"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.code, Code.Aborted, err.message);
    // The message, not a time: it ended at the server's trailers ("early end"), not at the
    // guard's abort after 3 s (which says "the call did not end at the server's trailers").
    assert.match(err.message, /early end/);
    for (let i = 0; i < 50 && !requestsClosed; i++) await sleep(10);
    assert.ok(requestsClosed, "the request stream was not closed");
  } finally {
    clearTimeout(timer);
    closeClient(client);
  }
}

describe("a bidi call the server ends while the request side is open ends at the trailers", () => {
  const servers: Record<string, { address: string; close(): void }> = {};
  before(async () => {
    servers["grpc-js"] = await grpcJsServer();
    servers["connect-node"] = await connectNodeServer();
    servers["dubbo-js"] = await dubboJsServer();
    servers.ours = await ourServer();
  });
  after(() => {
    for (const s of Object.values(servers)) s.close();
  });

  for (const name of ["grpc-js", "connect-node", "dubbo-js", "ours"]) {
    it(`${name} (gRPC)`, () => checkEarlyEnd(servers[name].address, "grpc"));
  }
  it("connect-node (Connect streaming)", () => checkEarlyEnd(servers["connect-node"].address, "connect"));
  it("ours (Connect streaming, gRPC-Web)", async () => {
    await checkEarlyEnd(servers.ours.address, "connect");
    await checkEarlyEnd(servers.ours.address, "grpc-web");
  });
  it("ours (the default triple protocol: streams are gRPC)", () => checkEarlyEnd(servers.ours.address, "triple"));
});
