// The baseline of bench/unary.mjs: bare node:http and node:http2 (core 'stream' API) servers
// that read the request body and answer the bytes the greet sample answers. No routing, no
// decoding: what any framework on Node pays at the very least.
import * as http from "node:http";
import * as http2 from "node:http2";

const [, , proto, port] = process.argv;
const BODY = Buffer.from('{"greeting":"triple"}');

if (proto === "h1") {
  http
    .createServer((req, res) => {
      req.on("data", () => {});
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-length": BODY.length });
        res.end(BODY);
      });
    })
    .listen(Number(port), "127.0.0.1", () => console.log("ready"));
} else {
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("data", () => {});
    stream.on("end", () => {
      stream.respond({ ":status": 200, "content-type": "application/json", "content-length": BODY.length });
      stream.end(BODY);
    });
  });
  server.listen(Number(port), "127.0.0.1", () => console.log("ready"));
}
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
