import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { createServer, type ServerOptions } from "../../src/index.js";
import { NumberService } from "../hostile/number-service.js";
import { ProbeService, UserService } from "./fixture-services.js";

/**
 * The server under test of the robustness tests, the hostile number tests (`NumberService`) and the soak, run as a child process so that a
 * crash shows up as the child exiting. Options come as JSON in FIXTURE_OPTIONS (server options:
 * limits, timeouts, cors); it prints `LISTENING <port>` once bound and exits on SIGTERM after a
 * graceful close.
 */
async function main(): Promise<void> {
  const options: ServerOptions = JSON.parse(process.env.FIXTURE_OPTIONS ?? "{}");
  const server = createServer({
    ...options,
    services: [new GreetServiceImpl(), new ProbeService(), new UserService(), new NumberService()],
  });
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
