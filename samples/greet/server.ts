import { createServer } from "../../src/index.js";
import { GreetServiceImpl } from "./greet-service.js";
import { UserServiceImpl } from "../user/user-service.js";

/**
 * The sample server: `npm start`. Listens on HOST:PORT (127.0.0.1:50051 by default); the accepted
 * name is GREET_NAME (default `triple`). SIGINT / SIGTERM shut it down gracefully.
 */
async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 50051);
  const host = process.env.HOST ?? "127.0.0.1";
  const server = createServer({
    services: [new GreetServiceImpl(process.env.GREET_NAME ?? "triple"), new UserServiceImpl()],
  });
  await server.listen({ port, host });
  console.log(`triple-rpc sample server listening on ${server.url}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down, letting in-flight calls finish`);
    server.close().then(
      () => process.exit(0),
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
