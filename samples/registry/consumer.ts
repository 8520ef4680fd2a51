// The consumer: `ZK=zookeeper://127.0.0.1:2181 node dist/samples/registry/consumer.js` calls
// HelloService.sayHello on whatever providers ZooKeeper lists, 10 calls a second, for
// `SECONDS` seconds (default 10), printing who answered.
import "reflect-metadata";
import { clientProviders, closeClient, createClient } from "../../src/index.js";
import { HelloService } from "./hello-service.js";

/** Calls for `seconds`; resolves with the answers per provider. */
export async function consume(registry: string, seconds: number, log = console.log): Promise<Map<string, number>> {
  const hello = createClient(HelloService, { timeoutMs: 3000, registry: { address: registry, application: "hello-consumer" } });
  const answers = new Map<string, number>();
  const end = Date.now() + seconds * 1000;
  let last = "";
  while (Date.now() < end) {
    try {
      const reply = await hello.sayHello("triple");
      answers.set(reply, (answers.get(reply) ?? 0) + 1);
    } catch (e) {
      log(`call failed: ${(e as Error).message}`);
    }
    const now = clientProviders(hello)
      .map((p) => p.address)
      .join(", ");
    if (now !== last) log(`consumer: providers now [${now}]`);
    last = now;
    await new Promise((r) => setTimeout(r, 100));
  }
  await closeClient(hello);
  return answers;
}

if (require.main === module) {
  void consume(process.env.ZK ?? "zookeeper://127.0.0.1:2181", Number(process.env.SECONDS ?? 10)).then((answers) => {
    for (const [reply, n] of answers) console.log(`${n} × ${reply}`);
  });
}
