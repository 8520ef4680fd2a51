import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type ServerOptions } from "../../src/index.js";
import { NumberService } from "./number-service.js";

/**
 * The server of the hostile number tests, in a child process (a blocked event loop shows up as
 * the bystander's missing greets): `NumberService` and the greet service. Server options as JSON
 * in NUMBER_OPTIONS; prints `LISTENING <port>`.
 */
async function main(): Promise<void> {
  const options: ServerOptions = JSON.parse(process.env.NUMBER_OPTIONS ?? "{}");
  const server = createServer({ ...options, services: [new GreetServiceImpl(), new NumberService()] });
  await server.listen({ port: 0, host: "127.0.0.1" });
  process.stdout.write(`LISTENING ${server.address.port}\n`);
  process.once("SIGTERM", () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
