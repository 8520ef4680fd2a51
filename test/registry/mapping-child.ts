// Races another process to add its application to the same interface mappings: `node
// mapping-child.js` with REGISTRY, APP, START_AT (ms since the epoch: both start writing then)
// and COUNT (interfaces) in the environment. Prints `DONE` once every mapping is written.
import { ZookeeperRegistry } from "../../src/registry/zookeeper.js";

async function main(): Promise<void> {
  // Registry sockets do not keep a process alive: this timer does, until the race is over.
  const alive = setInterval(() => {}, 1000);
  const registry = new ZookeeperRegistry(process.env.REGISTRY ?? "", { sessionTimeoutMs: 4000 });
  const count = Number(process.env.COUNT ?? 20);
  // Connected first (an idempotent write), so both processes start the race at the same moment.
  await registry.getMetadata("warm-up", "0").catch(() => undefined);
  await new Promise((r) => setTimeout(r, Math.max(0, Number(process.env.START_AT) - Date.now())));
  await Promise.all(Array.from({ length: count }, (_, i) => registry.addMapping(`org.example.race.Service${i}`, process.env.APP ?? "app")));
  process.stdout.write("DONE\n");
  await registry.close();
  clearInterval(alive);
}

void main();
