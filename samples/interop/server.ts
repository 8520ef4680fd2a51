import { createServer } from "../../src/index.js";
import { TestServiceImpl } from "./test-service.js";

/** The port of the interop server when `--port` is not given. */
export const DEFAULT_INTEROP_PORT = 50052;

/** Reads `--port N` / `--port=N` (the interop server flag) from the command line. */
export function parsePort(argv: readonly string[]): number {
  let raw: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--port" || a === "-p") raw = argv[++i];
    else if (a.startsWith("--port=")) raw = a.slice("--port=".length);
  }
  if (raw === undefined) return DEFAULT_INTEROP_PORT;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new Error(`--port needs a port number 0..65535, got "${raw}"`);
  return port;
}

/**
 * The gRPC interop server: `npm run interop:server -- --port N` serves grpc.testing.TestService
 * on 127.0.0.1:N (50052 by default). SIGINT / SIGTERM shut it down gracefully.
 */
async function main(): Promise<void> {
  const port = parsePort(process.argv.slice(2));
  const server = createServer({ services: [new TestServiceImpl()] });
  await server.listen({ port, host: "127.0.0.1" });
  console.log(`triple-rpc interop server listening on ${server.url}`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => process.exit(0),
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
