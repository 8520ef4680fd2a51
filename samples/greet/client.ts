import { closeClient, createClient, RpcError } from "../../src/index.js";
import { GreetServiceImpl } from "./greet-service.js";

/**
 * The sample client: `npm run sample:client` (after `npm run build`), against the sample server
 * (`npm start`) on HOST:PORT (127.0.0.1:50051 by default). Calls `Greet` with the accepted name
 * (GREET_NAME, default `triple`) and prints the greeting, then with a wrong name and prints the
 * failover error, then each streaming method.
 */
async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 50051);
  const host = process.env.HOST ?? "127.0.0.1";
  const name = process.env.GREET_NAME ?? "triple";
  const client = createClient(GreetServiceImpl, { providers: [`${host}:${port}`], timeoutMs: 10_000 });
  let failed = false;
  try {
    const reply = await client.greet({ name });
    console.log(`Greet(${name}): ${reply.greeting}`);

    try {
      const wrong = await client.greet({ name: "nobody" });
      console.log(`Greet(nobody) unexpectedly answered: ${wrong.greeting}`);
      failed = true;
    } catch (e) {
      console.log(`Greet(nobody) failed: ${(e as RpcError).message}`);
    }

    for await (const r of client.greetServerStream({ name })) console.log(`GreetServerStream: ${r.greeting}`);

    const joined = await client.greetClientStream(names(["alice", "bob", "carol"]));
    console.log(`GreetClientStream: ${joined.greeting}`);

    for await (const r of client.greetStream(names(["dave", "erin"]))) console.log(`GreetStream: ${r.greeting}`);
  } catch (e) {
    failed = true;
    console.error(e instanceof RpcError ? `error: ${e.toString()}` : e);
  } finally {
    closeClient(client);
  }
  process.exitCode = failed ? 1 : 0;
}

async function* names(list: readonly string[]): AsyncGenerator<{ name: string }> {
  for (const name of list) yield { name };
}

main();
