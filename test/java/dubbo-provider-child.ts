// Our provider of org.triplerpc.interop.Interop in a process of its own, for the Dubbo Java
// tests that SIGKILL it: `node dubbo-provider-child.js` with REGISTRY (address), APP and TAG
// (what whoami answers) in the environment. Prints `LISTENING <port>` once registered.
import "reflect-metadata";
import { createServer } from "../../src/index.js";
import { InteropProvider, QUIET } from "./dubbo-interop.js";

async function main(): Promise<void> {
  const server = createServer({
    logger: QUIET,
    services: [new InteropProvider(process.env.TAG ?? `pid-${process.pid}`)],
    registry: { address: process.env.REGISTRY as string, application: process.env.APP ?? "ts-provider" },
  });
  const a = await server.listen({ port: 0, host: "127.0.0.1" });
  process.stdout.write(`LISTENING ${a.port}\n`);
  process.on("SIGTERM", () => {
    void server.close().then(() => process.exit(0));
  });
}

void main();
