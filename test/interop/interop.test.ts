import { createServer } from "../../src/index.js";
import { TestServiceImpl } from "../../samples/interop/test-service.js";
import { interopCases } from "./cases.js";
import { startReferenceServer } from "./reference-server.js";

// Our server, serving samples/interop.
interopCases({
  name: "samples/interop (triple-rpc)",
  async start() {
    const server = createServer({ services: [new TestServiceImpl()] });
    const { port } = await server.listen({ port: 0, host: "127.0.0.1" });
    return { address: `127.0.0.1:${port}`, close: () => server.close(), inflight: () => server.inflightCount };
  },
});

// The same cases against a @grpc/grpc-js TestService: proves the cases themselves are right.
interopCases({
  name: "the @grpc/grpc-js reference server",
  start: () => startReferenceServer(),
  skip: {
    client_compressed_unary: "grpc-js servers hide the request's grpc-encoding from handlers",
    client_compressed_streaming: "grpc-js servers hide the request's grpc-encoding from handlers",
    server_compressed_unary: "grpc-js servers cannot compress responses",
    server_compressed_streaming: "grpc-js servers cannot compress responses",
  },
});
