// `npm run sample:registry`: two providers (child processes) and a consumer on a local
// ZooKeeper. ZK=zookeeper://host:port uses a running ZooKeeper; otherwise one is started from
// Debian's package (apt-get install -y zookeeper) in a temp directory and stopped at the end.
import "reflect-metadata";
import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { ZooKeeperServer, zookeeperMissing } from "../../test/helpers/zookeeper.js";
import { consume } from "./consumer.js";

function startProvider(zk: string, name: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, "provider.js")], {
    env: { ...process.env, ZK: zk, NAME: name },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (c: Buffer) => {
      process.stdout.write(c);
      if (c.toString().includes("listening")) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  let server: ZooKeeperServer | undefined;
  let zk = process.env.ZK;
  if (!zk) {
    const missing = zookeeperMissing();
    if (missing) {
      console.error(`${missing}\nor point ZK=zookeeper://host:port at a running ZooKeeper.`);
      process.exit(1);
    }
    server = await ZooKeeperServer.start({ tickTime: 2000 });
    zk = server.address();
    console.log(`started ZooKeeper on ${server.hostPort} (data in ${server.dir})`);
  }
  const providers = [await startProvider(zk, "p1"), await startProvider(zk, "p2")];
  const consumer = consume(zk, 6);
  // Half-way, p1 stops gracefully: its node goes first, the consumer moves to p2 without an error.
  setTimeout(() => providers[0].kill("SIGTERM"), 3000);
  const answers = await consumer;
  for (const [reply, n] of answers) console.log(`${n} × ${reply}`);
  // Stop the providers (each removes its node and drains) before ZooKeeper goes.
  await Promise.all(providers.map((p) => (p.exitCode !== null || p.signalCode !== null ? undefined : new Promise((r) => p.once("exit", r).kill("SIGTERM")))));
  await server?.destroy();
}

void main();
