import Fastify, { type FastifyInstance } from "fastify";
import { fastifyTriplePlugin } from "../../src/index.js";
import { GreetServiceImpl } from "../greet/greet-service.js";

/**
 * triple-rpc inside a Fastify app: `node dist/samples/fastify/server.js` (PORT, default 3000; 0
 * picks a free one; HTTP2=1 for Fastify's `http2: true` mode, h2c, where gRPC works too). The
 * greet service is served at `/greet.GreetService/<Method>` beside the app's own routes.
 */
export async function greetFastifyApp(http2: boolean): Promise<FastifyInstance> {
  const app: FastifyInstance<any, any, any> = http2 ? Fastify({ http2: true }) : Fastify();
  await app.register(fastifyTriplePlugin, { services: [new GreetServiceImpl()] });
  app.get("/app/hello", async (_req, reply) => {
    reply.type("text/plain");
    return "app route says hi";
  });
  app.post("/app/echo", async (req) => ({ youSent: req.body }));
  return app as FastifyInstance;
}

if (require.main === module) {
  void (async () => {
    const app = await greetFastifyApp(process.env.HTTP2 === "1");
    const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: "127.0.0.1" });
    console.log(`fastify sample listening on ${url}`);
    process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
  })();
}
