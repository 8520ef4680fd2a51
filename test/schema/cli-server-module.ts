// A server's main module as users write it: it defines nothing itself, exports nothing, and
// starts a server at import (`triple-rpc proto` must still describe the service and exit).
import { createServer } from "../../src/index.js";
import { InventoryService } from "./inventory-service.js";

process.stderr.write(`imported (TRIPLE_RPC_CLI=${process.env.TRIPLE_RPC_CLI ?? ""})\n`);
const server = createServer({ services: [new InventoryService()] });
server.listen({ port: 0, host: "127.0.0.1" }).then(() => {
  process.stderr.write(`started (TRIPLE_RPC_CLI=${process.env.TRIPLE_RPC_CLI ?? ""})\n`);
});
