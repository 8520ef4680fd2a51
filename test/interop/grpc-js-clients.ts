import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import * as path from "node:path";

/** The interop .proto files (sources, not compiled output). */
export const INTEROP_PROTO_DIR = path.resolve(__dirname, "../../../samples/interop");

/** grpc-js's view of test.proto: `snake_case` fields, enums as strings, bytes as Buffers. */
export const testing = (() => {
  const def = protoLoader.loadSync(path.join(INTEROP_PROTO_DIR, "test.proto"), {
    keepCase: true,
    defaults: true,
    enums: String,
    includeDirs: [INTEROP_PROTO_DIR],
  });
  const pkg = grpc.loadPackageDefinition(def) as any;
  return pkg.grpc.testing as {
    TestService: grpc.ServiceClientConstructor;
    UnimplementedService: grpc.ServiceClientConstructor;
  };
})();

/** A grpc-js client: methods are the lower-first rpc names, callbacks and streams as grpc-js has them. */
export type Client = grpc.Client & Record<string, any>;

/** Creates TestService and UnimplementedService clients on one plaintext channel each. */
export function connectClients(address: string, options: grpc.ChannelOptions = {}): { test: Client; unimplemented: Client; close(): void } {
  const creds = grpc.credentials.createInsecure();
  const test = new testing.TestService(address, creds, options) as Client;
  const unimplemented = new testing.UnimplementedService(address, creds, options) as Client;
  return {
    test,
    unimplemented,
    close() {
      test.close();
      unimplemented.close();
    },
  };
}

/** A buffer of `n` zero bytes. */
export function zeros(n: number): Buffer {
  return Buffer.alloc(n);
}
