// The server of bench/validation.mjs: one method twice, `bench.Plain/place` without constraints
// and `bench.Checked/place` with five (pattern, min, max, maxLength, format), same parameters,
// same body. Prints "ready <port>" once listening.
import { createRequire } from "node:module";
import * as path from "node:path";

const require = createRequire(import.meta.url);
const dist = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", process.env.DIST ?? "dist");
const { createServer, Method, Service } = require(path.join(dist, "src", "index.js"));

/** Declares a service the way standard decorators would, without a compiler: `@Method({ params })`. */
function service(name, params) {
  class Orders {
    place(sku, qty, note, email) {
      return `${sku}x${qty}${note ? ` (${note})` : ""} for ${email}`;
    }
  }
  Method({ params })(Orders.prototype, "place", Object.getOwnPropertyDescriptor(Orders.prototype, "place"));
  Service(name)(Orders);
  return new Orders();
}

const plain = service("bench.Plain", [
  { name: "sku", type: String },
  { name: "qty", type: Number },
  { name: "note", type: String, optional: true },
  { name: "email", type: String },
]);
const checked = service("bench.Checked", [
  { name: "sku", type: String, pattern: "^[A-Z]{2}-\\d+$" },
  { name: "qty", type: Number, min: 1, max: 100 },
  { name: "note", type: String, optional: true, maxLength: 200 },
  { name: "email", type: String, format: "email" },
]);

const server = createServer({ services: [plain, checked] });
await server.listen({ port: Number(process.argv[2] ?? 0), host: "127.0.0.1" });
console.log(`ready ${new URL(server.url).port}`);
process.on("SIGTERM", () => server.close().then(() => process.exit(0)));
