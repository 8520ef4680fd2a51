import express from "express";
import { expressTripleMiddleware } from "../../src/index.js";
import { GreetServiceImpl } from "../greet/greet-service.js";

/**
 * triple-rpc inside an Express app: `node dist/samples/express/server.js` (PORT, default 3000;
 * 0 picks a free one). The greet service is served at `/greet.GreetService/<Method>` over Triple
 * HTTP, Connect and gRPC-Web (Express speaks HTTP/1.1); the app keeps its own routes. The
 * middleware goes before `express.json()`, which must not read the RPC bodies first.
 */
export function greetExpressApp(): { app: express.Express; rpc: ReturnType<typeof expressTripleMiddleware> } {
  const app = express();
  const rpc = expressTripleMiddleware({ services: [new GreetServiceImpl()] });
  app.use(rpc);
  app.use(express.json());
  app.get("/app/hello", (_req, res) => {
    res.type("text/plain").send("app route says hi");
  });
  app.post("/app/echo", (req, res) => {
    res.json({ youSent: req.body });
  });
  return { app, rpc };
}

if (require.main === module) {
  const { app, rpc } = greetExpressApp();
  const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
    const { port } = server.address() as import("node:net").AddressInfo;
    console.log(`express sample listening on http://127.0.0.1:${port}`);
  });
  process.on("SIGTERM", () => void rpc.close().then(() => server.close(() => process.exit(0))));
}
