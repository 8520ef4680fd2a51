import { createFetchHandler } from "../../src/index.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";

/**
 * Run by Bun (`bun dist/test/adapters/bun-server.js`): the greet service on Bun.serve through
 * createFetchHandler, on a free port printed as `LISTENING <port>`.
 */
interface BunServe {
  serve(options: { port: number; hostname: string; fetch: (r: Request) => Promise<Response> }): { port: number };
}
const bun = (globalThis as unknown as { Bun?: BunServe }).Bun;
if (!bun) throw new Error("run this with bun");
const server = bun.serve({ port: 0, hostname: "127.0.0.1", fetch: createFetchHandler({ services: [new GreetServiceImpl()] }) });
console.log(`LISTENING ${server.port}`);
