// A provider in its own process, for tests that kill it: `node provider-child.js` with REGISTRY
// (address) and ID in the environment. Prints `LISTENING <port>` once registered.
import "reflect-metadata";
import { createServer } from "../../src/index.js";
import { EchoService } from "./services.js";

async function main(): Promise<void> {
  const id = process.env.ID ?? `pid-${process.pid}`;
  const server = createServer({
    services: [new EchoService(id)],
    registry: {
      address: process.env.REGISTRY as string,
      application: process.env.APP ?? "registry-test",
      level: (process.env.REGISTRY_LEVEL as "interface" | "application" | "both" | undefined) ?? "both",
    },
  });
  const a = await server.listen({ port: 0, host: "127.0.0.1" });
  process.stdout.write(`LISTENING ${a.port}\n`);
  process.on("SIGTERM", () => {
    void server.close().then(() => process.exit(0));
  });
}

void main();
