import * as grpc from "@grpc/grpc-js";
import * as loader from "@grpc/proto-loader";
import * as protobuf from "protobufjs";
import { GREET_PROTO } from "../../samples/greet/greet-service.js";

const definition = loader.loadSync(GREET_PROTO, { keepCase: true, longs: String, enums: String, defaults: true });
const greetService = (grpc.loadPackageDefinition(definition) as any).greet.GreetService.service as grpc.ServiceDefinition;

/** Knobs of one grpc-js greet server. */
export interface GrpcJsServerOptions {
  /** Greet's accepted name. */
  accepted?: string;
  /** GreetServerStream sends one message, then fails with this text (for "no retry after a message"). */
  failAfterFirst?: string;
}

/** A running grpc-js server with call counters. */
export interface GrpcJsServer {
  readonly address: string;
  readonly calls: Record<string, number>;
  /** What the last call saw: metadata and deadline. */
  last: { metadata?: Record<string, unknown>; deadline?: grpc.Deadline };
  close(): Promise<void>;
}

/** A google.rpc.Status with one detail, base64 — what grpc-status-details-bin carries. */
function statusDetailsBin(code: number, message: string, typeUrl: string, value: Uint8Array): Buffer {
  const any = protobuf.Writer.create().uint32(10).string(typeUrl).uint32(18).bytes(value).finish();
  return Buffer.from(protobuf.Writer.create().uint32(8).int32(code).uint32(18).string(message).uint32(26).bytes(any).finish());
}

/** Starts a grpc-js server implementing greet.proto's four methods on 127.0.0.1:0. */
export async function startGrpcJsServer(opts: GrpcJsServerOptions = {}): Promise<GrpcJsServer> {
  const accepted = opts.accepted ?? "triple";
  const server = new grpc.Server();
  const calls: Record<string, number> = { Greet: 0, GreetServerStream: 0, GreetClientStream: 0, GreetStream: 0 };
  const state: GrpcJsServer = {
    address: "",
    calls,
    last: {},
    close: () =>
      new Promise((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(() => server.forceShutdown(), 500).unref();
      }),
  };
  const see = (call: { metadata: grpc.Metadata; getDeadline(): grpc.Deadline }) => {
    state.last = { metadata: call.metadata.getMap(), deadline: call.getDeadline() };
  };
  server.addService(greetService, {
    Greet(call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) {
      calls.Greet++;
      see(call);
      const name: string = call.request.name;
      if (name === "slow") {
        const t = setTimeout(() => cb(null, { greeting: "late" }), 2000);
        call.on("cancelled", () => clearTimeout(t));
        return;
      }
      if (name === "details") {
        const md = new grpc.Metadata();
        md.set("grpc-status-details-bin", statusDetailsBin(3, "bad", "type.googleapis.com/google.rpc.BadRequest", Buffer.from([1, 2, 3])));
        md.set("x-trailer", "t1");
        cb({ code: grpc.status.INVALID_ARGUMENT, details: "bad request: 100% ünïcødé", metadata: md });
        return;
      }
      if (name !== accepted) {
        cb({ code: grpc.status.UNKNOWN, details: `name is not right: ${name}` });
        return;
      }
      const header = new grpc.Metadata();
      header.set("x-header", "h1");
      call.sendMetadata(header);
      const trailer = new grpc.Metadata();
      trailer.set("x-trailer", "t1");
      cb(null, { greeting: name }, trailer);
    },
    GreetServerStream(call: grpc.ServerWritableStream<any, any>) {
      calls.GreetServerStream++;
      see(call);
      const name: string = call.request.name;
      if (name === "fail-first") {
        call.emit("error", { code: grpc.status.UNAVAILABLE, details: "nothing to stream" });
        return;
      }
      call.write({ greeting: `hello, ${name} (1/3)` });
      if (opts.failAfterFirst) {
        setTimeout(() => call.emit("error", { code: grpc.status.UNAVAILABLE, details: opts.failAfterFirst }), 20);
        return;
      }
      call.write({ greeting: `hello, ${name} (2/3)` });
      call.write({ greeting: `hello, ${name} (3/3)` });
      call.end();
    },
    GreetClientStream(call: grpc.ServerReadableStream<any, any>, cb: grpc.sendUnaryData<any>) {
      calls.GreetClientStream++;
      see(call);
      const names: string[] = [];
      call.on("data", (r) => names.push(r.name));
      call.on("end", () => cb(null, { greeting: names.join(", ") }));
    },
    GreetStream(call: grpc.ServerDuplexStream<any, any>) {
      calls.GreetStream++;
      see(call);
      call.on("data", (r) => call.write({ greeting: r.name }));
      call.on("end", () => call.end());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return Object.assign(state, { address: `127.0.0.1:${port}` });
}
