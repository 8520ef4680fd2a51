// createTestClient (in memory, no socket) vs the same client over a loopback socket: sequential
// unary calls, mean µs per call (client and server in this one process, pinned to one CPU when
// taskset exists: run it as `taskset -c 1 node bench/in-memory.mjs`).
//
//   npm run build && node bench/in-memory.mjs        CALLS=5000 node bench/in-memory.mjs
import { createRequire } from "node:module";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = resolve(ROOT, process.env.DIST ?? "dist");
const CALLS = Number(process.env.CALLS ?? 3000);
const require = createRequire(import.meta.url);
const { closeClient, createClient, createServer, createTestClient } = require(join(DIST, "src/index.js"));
const { GreetServiceImpl } = require(join(DIST, "samples/greet/greet-service.js"));

async function perCall(client) {
  for (let i = 0; i < 200; i++) await client.greet({ name: "triple" });
  const t = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) await client.greet({ name: "triple" });
  return Number(process.hrtime.bigint() - t) / 1000 / CALLS;
}

const server = createServer({ services: [new GreetServiceImpl()] });
await server.listen({ port: 0 });
for (const combo of [
  { httpVersion: "2" },
  { httpVersion: "2", contentType: "grpc+proto" },
  { httpVersion: "2", protocol: "connect" },
  { httpVersion: "1.1" },
]) {
  const mem = createTestClient(GreetServiceImpl, { services: [new GreetServiceImpl()], client: combo });
  const net = createClient(GreetServiceImpl, { providers: [server.url], retries: 0, ...combo });
  const m = await perCall(mem);
  const n = await perCall(net);
  console.log(`${JSON.stringify(combo).padEnd(48)} in memory ${m.toFixed(1).padStart(7)} µs/call   socket ${n.toFixed(1).padStart(7)} µs/call`);
  await closeClient(mem);
  await closeClient(net);
}
await server.close();
