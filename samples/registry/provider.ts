// One provider: `ZK=zookeeper://127.0.0.1:2181 NAME=p1 node dist/samples/registry/provider.js`.
// It registers org.example.hello.HelloService in ZooKeeper once it listens, and removes the
// node first when it stops (SIGINT / SIGTERM), so consumers stop calling it before it drains.
import "reflect-metadata";
import { createServer } from "../../src/index.js";
import { HelloService } from "./hello-service.js";

async function main(): Promise<void> {
  const name = process.env.NAME ?? `provider-${process.pid}`;
  const server = createServer({
    services: [new HelloService(name)],
    registry: { address: process.env.ZK ?? "zookeeper://127.0.0.1:2181", application: "hello-provider" },
  });
  const a = await server.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? "127.0.0.1" });
  console.log(`${name}: listening on ${a.address}:${a.port}, registered in ${server.registry?.address}`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

void main();
