import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createFileRegistry, type DescService, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Code as ConnectCode, ConnectError, createClient } from "@connectrpc/connect";
import { compressionGzip, createGrpcTransport } from "@connectrpc/connect-node";
import * as protobuf from "protobufjs";
import "protobufjs/ext/descriptor";
import { GREET_PROTO, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type TripleServer } from "../../src/index.js";
import { PROBE_PROTO, ProbeService } from "./probe-service.js";

/** Describes a .proto's service for connect-es v2 (protobufjs → FileDescriptorSet → registry). */
function describe_(file: string, service: string): DescService {
  const root = protobuf.loadSync(file);
  const set = (root as unknown as { toDescriptor(s: string): protobuf.Message }).toDescriptor("proto3");
  const bytes = (set.constructor as unknown as typeof protobuf.Message).encode(set).finish();
  const svc = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes)).getService(service);
  if (!svc) throw new Error(`no ${service}`);
  return svc;
}

async function* names(...ns: string[]) {
  for (const name of ns) yield { name };
}

describe("gRPC with @connectrpc/connect-node (createGrpcTransport) as the client", () => {
  let server: TripleServer;
  let greet: any;
  let probe: any;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new ProbeService()] });
    await server.listen({ port: 0 });
    const transport = createGrpcTransport({ baseUrl: server.url });
    greet = createClient(describe_(GREET_PROTO, "greet.GreetService"), transport);
    probe = createClient(describe_(PROBE_PROTO, "probe.Probe"), transport);
  });
  after(() => server.close());

  it("unary Greet", async () => {
    const r = await greet.greet({ name: "triple" });
    assert.equal(r.greeting, "triple");
  });

  it("server streaming GreetServerStream", async () => {
    const got: string[] = [];
    for await (const m of greet.greetServerStream({ name: "c" })) got.push(m.greeting);
    assert.deepEqual(got, ["hello, c (1/3)", "hello, c (2/3)", "hello, c (3/3)"]);
  });

  it("client streaming GreetClientStream", async () => {
    const r = await greet.greetClientStream(names("x", "y"));
    assert.equal(r.greeting, "x, y");
  });

  it("bidi GreetStream", async () => {
    const got: string[] = [];
    for await (const m of greet.greetStream(names("p", "q", "r"))) got.push(m.greeting);
    assert.deepEqual(got, ["p", "q", "r"]);
  });

  it("a handler's error is unknown with its text", async () => {
    const e = await greet.greet({ name: "nobody" }).catch((x: unknown) => x);
    assert.ok(e instanceof ConnectError);
    assert.equal(e.code, ConnectCode.Unknown);
    assert.equal(e.rawMessage, "name is not right: nobody");
  });

  it("an RpcError's code, metadata and details survive", async () => {
    const e = await probe.fail({ text: "gone", code: 5 }).catch((x: unknown) => x);
    assert.ok(e instanceof ConnectError);
    assert.equal(e.code, ConnectCode.NotFound);
    assert.equal(e.rawMessage, "gone");
    assert.equal(e.metadata.get("x-error-meta"), "yes");
    assert.equal(e.details.length, 1);
    assert.equal((e.details[0] as { desc?: unknown; type?: string }).type, "probe.ProbeResponse");
  });

  it("timeoutMs shorter than the handler is deadline_exceeded", async () => {
    const e = await probe.sleep({ text: "c-late", delayMs: 2000 }, { timeoutMs: 100 }).catch((x: unknown) => x);
    assert.ok(e instanceof ConnectError);
    assert.equal(e.code, ConnectCode.DeadlineExceeded);
  });

  it("gzip both ways", async () => {
    const transport = createGrpcTransport({ baseUrl: server.url, sendCompression: compressionGzip, compressMinBytes: 1 });
    const c: any = createClient(describe_(PROBE_PROTO, "probe.Probe"), transport);
    const payload = new Uint8Array(100_000).fill(5);
    const r = await c.echo({ text: "z", payload });
    assert.equal(r.payload.length, 100_000);
  });
});
